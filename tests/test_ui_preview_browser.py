"""The preview survives the email and shows it as clients will, in a real Chromium at 1280×800, 768×1024 and
390×844: Forced dark (a simulated inversion) beside the dark-aware Dark mode, a meta refresh or a
replacing link or a form leaving the preview in place and listed by the Checks tab, the jumped-to source
line marked, and the frames of an inbox thread as tall as their messages with nothing logged to the
console."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable, Iterator

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from emulator.testing import EmulatorServer
from tests.inboxes_helpers import ADDRESS, DOMAIN, raw_mail
from tests.ui_helpers import BROWSER, OtherOrigin

pytestmark = BROWSER
UI = "/_emulator/ui"
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
TABLET: ViewportSize = {"width": 768, "height": 1024}
SIZES = [pytest.param(DESKTOP, id="desktop"), pytest.param(TABLET, id="tablet"),
         pytest.param(PHONE, id="phone")]


def png(width: int, height: int, pixel: Callable[[int, int], tuple[int, int, int, int]]) -> bytes:
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


# A black bar on a transparent background: the logo that vanishes under a forced dark mode.
LOGO = base64.b64encode(png(60, 60, lambda x, y: (0, 0, 0, 255) if 15 <= x < 45 else (0, 0, 0, 0))).decode()
NO_DARK_STYLES = f"""<!doctype html><html><body style="margin:0">
<p id="text" style="color:#222222">Your receipt</p>
<img id="logo" src="data:image/png;base64,{LOGO}" width="60" height="60" alt="Acme">
</body></html>"""
DARK_AWARE = """<!doctype html><html><head><meta name="color-scheme" content="light dark"><style>
body { background: #ffffff; color: #222222; }
@media (prefers-color-scheme: dark) { body { background: #111111; color: #eeeeee; } }
</style></head><body><p id="hello">Hello in both schemes</p></body></html>"""
# Decodes a PNG screenshot in the page and reads the listed pixels (no imaging library needed here).
PIXELS = """async ([png, points]) => {
  const image = new Image(); image.src = 'data:image/png;base64,' + png; await image.decode();
  const canvas = document.createElement('canvas'); canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext('2d'); context.drawImage(image, 0, 0);
  return points.map(([x, y]) => Array.from(context.getImageData(x, y, 1, 1).data.slice(0, 3)));
}"""


@pytest.fixture
def context(browser: Browser, request: pytest.FixtureRequest) -> Iterator[BrowserContext]:
    viewport = request.node.callspec.params.get("viewport", DESKTOP)
    opened = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE)
    yield opened
    opened.close()


def send(api: httpx.Client, html: str) -> str:
    response = api.post("/emails", json={"from": "Acme <orders@acme.dev>", "to": ["ada@lovelace.dev"],
                                         "subject": "Your receipt", "html": html})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def pixels(page: Page, points: list[tuple[float, float]]) -> list[list[int]]:
    """The colours at `points` (relative to the preview frame) in a screenshot of the frame."""
    shot = base64.b64encode(page.locator("#preview").screenshot(animations="disabled")).decode()
    scale = page.evaluate("devicePixelRatio")
    found: list[list[int]] = page.evaluate(PIXELS, [shot, [[x * scale, y * scale] for x, y in points]])
    return found


def logo_and_beside(page: Page) -> list[list[int]]:
    logo = page.frame_locator("#preview").locator("#logo").bounding_box()
    frame = page.locator("#preview").bounding_box()
    assert logo and frame
    x, y = logo["x"] - frame["x"], logo["y"] - frame["y"]
    # The bar, its transparent edge, and the background beside the image.
    return pixels(page, [(x + 30, y + 30), (x + 5, y + 30), (x + 90, y + 30)])


@pytest.mark.parametrize("viewport", SIZES)
def test_forced_dark_sinks_a_black_logo_and_says_it_is_a_simulation(server: EmulatorServer, api: httpx.Client,
                                                                     context: BrowserContext,
                                                                     viewport: ViewportSize) -> None:
    page = context.new_page()
    page.goto(f"{server.url}{UI}/messages/{send(api, NO_DARK_STYLES)}")
    expect(page.frame_locator("#preview").locator("#logo")).to_be_visible()
    bar, edge, beside = logo_and_beside(page)
    assert max(bar) < 30 and min(edge) > 225 and min(beside) > 225  # light: a black logo on white
    page.locator("#forced-dark-preview").click()
    expect(page.locator("#forced-dark-preview")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#forced-note")).to_be_visible()
    expect(page.locator("#forced-note")).to_contain_text("simulat")
    expect(page.locator("#forced-dark-preview")).to_contain_text("simulated")
    expect(page.frame_locator("#preview").locator("#logo")).to_be_visible()
    page.wait_for_function("document.getElementById('preview').offsetHeight > 60")
    bar, edge, beside = logo_and_beside(page)
    assert max(bar) < 30 and max(edge) < 30 and max(beside) < 30, (bar, edge, beside)  # dark on dark
    text = page.frame_locator("#preview").locator("#text").bounding_box()
    frame = page.locator("#preview").bounding_box()
    assert text and frame
    # The text turned light: the brightest pixel across the word is near white.
    row = pixels(page, [(text["x"] - frame["x"] + dx, text["y"] - frame["y"] + text["height"] / 2)
                        for dx in range(0, 80, 2)])
    assert max(max(p) for p in row) > 200, row
    page.locator("#forced-dark-preview").click()  # off again: the email as designed
    expect(page.locator("#forced-note")).to_be_hidden()
    expect(page.locator("#preview")).not_to_have_css("filter", "invert(1) hue-rotate(180deg)")


@pytest.mark.parametrize("viewport", SIZES)
def test_dark_mode_of_mail_without_dark_styles_points_to_forced_dark(
        server: EmulatorServer, api: httpx.Client, context: BrowserContext, viewport: ViewportSize) -> None:
    page = context.new_page()
    page.goto(f"{server.url}{UI}/messages/{send(api, NO_DARK_STYLES)}")
    hint = page.locator("#dark-hint")
    expect(hint).to_be_hidden()
    page.locator("#dark-preview").click()
    expect(hint).to_be_visible()
    expect(hint).to_have_text("This mail has no dark-mode styles; clients that force dark mode will invert it"
                              " — see Forced dark.")
    hint.get_by_role("button", name="Forced dark").click()
    expect(page.locator("#forced-dark-preview")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#dark-preview")).to_have_attribute("aria-pressed", "false")
    expect(hint).to_be_hidden()
    expect(page.locator("#frame-wrap")).to_have_attribute("data-scheme", "forced")


@pytest.mark.parametrize("viewport", SIZES)
def test_a_dark_aware_mail_shows_its_own_dark_styles_without_a_hint(server: EmulatorServer, api: httpx.Client,
                                                                    context: BrowserContext,
                                                                    viewport: ViewportSize) -> None:
    page = context.new_page()
    page.goto(f"{server.url}{UI}/messages/{send(api, DARK_AWARE)}")
    body = page.frame_locator("#preview").locator("body")
    expect(body).to_have_css("background-color", "rgb(255, 255, 255)")
    page.locator("#dark-preview").click()
    expect(body).to_have_css("background-color", "rgb(17, 17, 17)")
    expect(body).to_have_css("color", "rgb(238, 238, 238)")
    expect(page.locator("#dark-hint")).to_be_hidden()
    expect(page.locator("#preview")).to_have_css("filter", "none")  # its own styles, no inversion


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[OtherOrigin]:
    other = OtherOrigin("<p id='elsewhere'>Another site</p>")
    yield other
    other.close()


def navigating(url: str) -> dict[str, tuple[str, int]]:
    """Per case: the email (its navigating element on line 3) and the Checks finding expected."""
    body = "<!doctype html>\n<html><body>\n{}\n<p id=\"mail\">The email</p>\n</body></html>"
    return {
        "refresh": (body.format(f'<meta http-equiv="refresh" content="0;url={url}">'), "meta_refresh"),
        "self": (body.format(f'<a id="go" href="{url}" target="_self">Go</a>'), "link_target"),
        "top": (body.format(f'<a id="go" href="{url}" target="_top">Go</a>'), "link_target"),
        "parent": (body.format(f'<a id="go" href="{url}" target="_parent">Go</a>'), "link_target"),
        "base": (body.format(f'<base target="_self"><a id="go" href="{url}">Go</a>'), "base_target"),
        "form": (body.format(f'<form action="{url}"><button id="go">Send</button></form>'), "form"),
    }  # type: ignore[return-value]


@pytest.mark.parametrize("viewport", SIZES)
@pytest.mark.parametrize("case", ["refresh", "self", "top", "parent", "base", "form"])
def test_the_preview_survives_what_the_email_does_and_checks_lists_it(
        server: EmulatorServer, api: httpx.Client, context: BrowserContext, elsewhere: OtherOrigin,
        viewport: ViewportSize, case: str) -> None:
    html, problem = navigating(elsewhere.url)[case]
    page = context.new_page()
    page.goto(f"{server.url}{UI}/messages/{send(api, html)}")
    mail = page.frame_locator("#preview").locator("#mail")
    expect(mail).to_have_text("The email")
    if case in ("self", "top", "parent", "base"):  # the link opens in a new tab, like every other link
        with context.expect_page() as opened:
            page.frame_locator("#preview").locator("#go").click()
        expect(opened.value.locator("#elsewhere")).to_have_text("Another site")
        opened.value.close()
    elif case == "form":
        page.frame_locator("#preview").locator("#go").click()
    page.wait_for_timeout(1500)  # room for a refresh or a submission to happen, if anything let it
    expect(mail).to_have_text("The email")
    assert page.frames[1].url.startswith(f"{server.url}{UI}/messages/"), page.frames[1].url
    assert page.url.startswith(f"{server.url}{UI}/messages/")

    page.locator("#tab-checks").click()
    row = page.locator(f"#navigation-table tr[data-problem='{problem}']")
    expect(row).to_have_count(1)
    expect(row.locator("a.line-link")).to_have_text("3")
    row.locator("a.line-link").click()
    line = page.locator("#L3")
    expect(line).to_be_in_viewport()
    expect(line).to_have_class("src-line jumped")
    background = line.evaluate("l => getComputedStyle(l).backgroundColor")
    other = page.locator("#L4").evaluate("l => getComputedStyle(l).backgroundColor")
    assert background != other and background not in ("rgba(0, 0, 0, 0)", "transparent"), background


def inbox_thread(api: httpx.Client) -> tuple[str, str]:
    domain = api.post("/domains", json={"name": DOMAIN, "capabilities": {"receiving": "enabled"}})
    assert domain.status_code == 201, domain.text
    inbox = api.post("/inboxes", json={"email_address": ADDRESS, "name": "Support"}).json()
    previous = None
    for n, height in enumerate((40, 700, 1500), 1):
        html = f'<div style="height:{height}px">Message {n}</div><p>end of {n}</p>'
        raw = raw_mail(f"Order {'Re: ' if previous else ''}question", f"Message {n}", f"<m{n}@example.org>",
                       in_reply_to=previous, html=html)
        reply = api.post("/_emulator/inbound", content=raw, headers={"content-type": "message/rfc822"})
        assert reply.status_code == 200, reply.text
        previous = f"<m{n}@example.org>"
    threads = api.get(f"/inboxes/{inbox['id']}/threads").json()["data"]
    assert len(threads) == 1, threads
    return inbox["id"], threads[0]["id"]


@pytest.mark.parametrize("viewport", SIZES)
def test_thread_frames_are_as_tall_as_their_messages_and_log_nothing(
        server: EmulatorServer, api: httpx.Client, context: BrowserContext, viewport: ViewportSize) -> None:
    inbox_id, thread_id = inbox_thread(api)
    page = context.new_page()
    logged: list[str] = []
    page.on("console", lambda message: logged.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: logged.append(f"pageerror: {error}"))
    page.goto(f"{server.url}{UI}/inboxes/{inbox_id}/threads/{thread_id}")
    frames = page.locator(".conversation iframe")
    expect(frames).to_have_count(3)
    for index, least in enumerate((40, 700, 1500)):
        frame = frames.nth(index)
        expect(frame.content_frame.locator("p")).to_have_text(f"end of {index + 1}")
        page.wait_for_function("([frame, least]) => frame.offsetHeight >= least",
                               arg=[frame.element_handle(), least])
        content = frame.content_frame.locator("html").evaluate("root => root.scrollHeight")
        expect(frame).to_have_js_property("offsetHeight", content)
        height = frame.evaluate("f => f.offsetHeight")
        assert abs(height - content) <= 3, (index, height, content)
    page.wait_for_load_state("load")
    assert logged == [], logged
