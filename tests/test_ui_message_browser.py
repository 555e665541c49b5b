"""The message view as a daily driver, in a real Chromium at 1280×800 and 390×844: the email above the fold,
a compact summary, the HTML source, device widths, a dark preview independent of any theme, the UI theme,
next/previous, `?` help, and the phone layout (one-row header, scrolling tabs, stacked headers, labels)."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from emulator.testing import EmulatorServer
from tests.inboxes_helpers import ADDRESS, DOMAIN
from tests.ui_helpers import BROWSER

pytestmark = BROWSER
UI = "/_emulator/ui"
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
SIZES = [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")]
# Where the email's preview may start at most: the issue measured it at 643 and 986.
FOLD = {"desktop": 400, "phone": 500}
PNG = base64.b64encode(base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")).decode()
RECEIPT = """<!doctype html>
<html>
<head>
<style>
  .row { display: flex; }
</style>
</head>
<body style="margin:0">
<!-- header -->
<div class="row"><h1>Thanks, Ada</h1></div>
<p>Order <a href="https://acme.dev/orders/1042">#1042</a></p>
</body>
</html>"""
DARK_AWARE = """<!doctype html><html><head><meta name="color-scheme" content="light dark"><style>
body { background: #ffffff; color: #222222; }
@media (prefers-color-scheme: dark) { body { background: #111111; color: #eeeeee; } }
</style></head><body><p id="hello">Hello in both schemes</p></body></html>"""
TALL = '<div style="height:2600px">Top of a long newsletter</div><p>The end</p>'


Opener = Callable[..., Page]
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


def name_of(viewport: ViewportSize) -> str:
    return "phone" if viewport is PHONE else "desktop"


@pytest.fixture
def open_page(browser: Browser, api: httpx.Client) -> Iterator[Opener]:
    contexts = []

    def opener(viewport: ViewportSize, url: str, **options: object) -> Page:
        context = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE,
                                      **options)  # type: ignore[arg-type]
        contexts.append(context)
        page = context.new_page()
        page.goto(url)
        return page

    yield opener
    for context in contexts:
        context.close()


def send(api: httpx.Client, **fields: object) -> str:
    body: dict[str, object] = {"from": "Acme Orders <orders@acme.dev>",
                               "to": ["Ada Lovelace <ada@lovelace.dev>"], "subject": "Your receipt #1042",
                               "text": "Thanks for your order."}
    body.update(fields)
    response = api.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def box(page: Page, selector: str) -> dict[str, float]:
    found = page.locator(selector).bounding_box()
    assert found is not None, selector
    return found


@pytest.mark.parametrize("viewport", SIZES)
def test_the_email_comes_first_with_a_compact_summary(server: EmulatorServer, api: httpx.Client,
                                                      open_page: Opener, viewport: ViewportSize) -> None:
    email_id = send(api, html=RECEIPT, cc=["billing@lovelace.dev"], bcc=["audit@acme.dev"],
                    reply_to=["support@acme.dev"], tags=[{"name": "category", "value": "receipt"}],
                    attachments=[{"filename": "invoice-1042.pdf", "content": PNG},
                                 {"filename": "logo.png", "content": PNG}])
    assert api.post("/_emulator/clock/advance", json={"seconds": 10}).status_code == 200
    page = open_page(viewport, f"{server.url}{UI}/messages/{email_id}")
    expect(page.frame_locator("#preview").locator("h1")).to_have_text("Thanks, Ada")
    assert box(page, "#preview")["y"] <= FOLD[name_of(viewport)]
    summary = page.locator("#summary")
    for text in ("Acme Orders <orders@acme.dev>", "Ada Lovelace <ada@lovelace.dev>",
                 "2026-05-14 09:00:00 UTC", "category:receipt"):
        expect(summary).to_contain_text(text)
    expect(page.locator("#subject")).to_have_text("Your receipt #1042")
    expect(page.locator("#status")).to_have_text("delivered")
    expect(page.locator("#status")).to_be_in_viewport()
    more = page.locator("#all-fields")
    expect(more.get_by_text("audit@acme.dev")).to_be_hidden()
    more.locator("summary").click()
    for text in ("audit@acme.dev", "support@acme.dev", email_id):
        expect(more.get_by_text(text, exact=True)).to_be_visible()
    assert page.evaluate(OVERFLOW) == 0


@pytest.mark.parametrize("viewport", SIZES)
def test_the_html_source_tab_numbers_lines_as_the_checks_tab_does(server: EmulatorServer, api: httpx.Client,
                                                                 open_page: Opener,
                                                                 viewport: ViewportSize) -> None:
    email_id = send(api, html=RECEIPT)
    page = open_page(viewport, f"{server.url}{UI}/messages/{email_id}")
    page.locator("#tab-checks").click()
    flex = page.locator("#html-unsupported tr", has_text="display:flex").locator("a.line-link")
    expect(flex).to_have_text(["5"])  # `.row { display: flex; }` is on line 5 of RECEIPT
    flex.click()
    expect(page.locator("#panel-source")).to_be_visible()
    line = page.locator("#L5")
    expect(line).to_be_in_viewport()
    expect(line.locator(".ln")).to_have_text("5")
    expect(line.locator("code")).to_have_text("  .row { display: flex; }")
    expect(page.locator("#source .src-line")).to_have_count(len(RECEIPT.split("\n")))
    expect(page.locator("#L9 code")).to_have_text("<!-- header -->")  # decoded, not quoted-printable
    tag = page.locator("#L11 .t-tag").first
    expect(tag).to_have_text("<p")
    colours = page.evaluate("""() => {
        const code = document.querySelector('#L11 code');
        return [getComputedStyle(code).color, getComputedStyle(code.querySelector('.t-tag')).color,
                getComputedStyle(code.querySelector('.t-attr')).color,
                getComputedStyle(code.querySelector('.t-value')).color];
    }""")
    assert len(set(colours)) == 4, colours  # text, tag names, attributes and values each their own colour
    link = page.locator("#link-table a.line-link")
    page.locator("#tab-checks").click()
    expect(link).to_have_text(["11"])


def test_device_widths_desktop_tablet_and_mobile(server: EmulatorServer, api: httpx.Client,
                                                 open_page: Opener) -> None:
    email_id = send(api, html="<p>Hello</p>")
    page = open_page(DESKTOP, f"{server.url}{UI}/messages/{email_id}")
    preview = page.locator("#preview")
    assert box(page, "#preview")["width"] > 1100
    for name, width in (("tablet", 768), ("mobile", 375)):
        page.get_by_role("button", name=name.capitalize(), exact=True).click()
        expect(preview).to_have_js_property("offsetWidth", width)
        expect(page.get_by_role("button", name=name.capitalize(), exact=True)).to_have_attribute(
            "aria-pressed", "true")
    page.get_by_role("button", name="Desktop", exact=True).click()
    padding = "parseFloat(getComputedStyle(w).paddingLeft) + parseFloat(getComputedStyle(w).paddingRight)"
    inner = page.locator("#frame-wrap").evaluate(f"w => w.clientWidth - ({padding})")
    assert inner > 1100
    expect(preview).to_have_js_property("offsetWidth", round(inner))


def test_on_a_phone_the_preview_is_the_phones_width(server: EmulatorServer, api: httpx.Client,
                                                    open_page: Opener) -> None:
    email_id = send(api, html="<p>Hello</p>")
    page = open_page(PHONE, f"{server.url}{UI}/messages/{email_id}")
    expect(page.get_by_role("button", name="Tablet", exact=True)).to_be_hidden()  # no room to show 768 px
    frame = box(page, "#preview")
    assert frame["x"] >= 0 and frame["x"] + frame["width"] <= 390 and frame["width"] > 330


def body_colours(page: Page) -> tuple[str, str]:
    body = page.frame_locator("#preview").locator("body")
    return (body.evaluate("b => getComputedStyle(b).backgroundColor"),
            body.evaluate("b => getComputedStyle(b).color"))


LIGHT = ("rgb(255, 255, 255)", "rgb(34, 34, 34)")
DARK = ("rgb(17, 17, 17)", "rgb(238, 238, 238)")


@pytest.mark.parametrize("viewport", SIZES)
@pytest.mark.parametrize("system", ["light", "dark"])
def test_the_dark_preview_follows_its_toggle_not_the_system(server: EmulatorServer, api: httpx.Client,
                                                            open_page: Opener, viewport: ViewportSize,
                                                            system: str) -> None:
    email_id = send(api, html=DARK_AWARE)
    page = open_page(viewport, f"{server.url}{UI}/messages/{email_id}", color_scheme=system)
    hello = page.frame_locator("#preview").locator("#hello")
    expect(hello).to_have_text("Hello in both schemes")
    assert body_colours(page) == LIGHT  # the light rendering, even under a dark system
    page.locator("#dark-preview").click()
    expect(page.locator("#dark-preview")).to_have_attribute("aria-pressed", "true")
    expect(page.frame_locator("#preview").locator("body")).to_have_css("background-color", DARK[0])
    assert body_colours(page) == DARK
    page.locator("#dark-preview").click()
    expect(page.frame_locator("#preview").locator("body")).to_have_css("background-color", LIGHT[0])


def test_an_email_without_dark_styles_stays_as_designed_in_the_dark_preview(server: EmulatorServer,
                                                                            api: httpx.Client,
                                                                            open_page: Opener) -> None:
    email_id = send(api, html="<p id=plain>Plain</p>")
    page = open_page(DESKTOP, f"{server.url}{UI}/messages/{email_id}", color_scheme="dark")
    page.locator("#dark-preview").click()
    expect(page.locator("#frame-wrap")).to_have_attribute("data-scheme", "dark")
    plain = page.frame_locator("#preview").locator("#plain")
    expect(plain).to_have_css("color", "rgb(0, 0, 0)")
    frame_background = page.locator("#preview").evaluate("f => getComputedStyle(f).backgroundColor")
    assert frame_background == "rgb(255, 255, 255)"


@pytest.mark.parametrize("viewport", SIZES)
def test_the_ui_theme_is_switchable_and_remembered_apart_from_the_preview(
        server: EmulatorServer, api: httpx.Client, open_page: Opener, viewport: ViewportSize) -> None:
    email_id = send(api, html=DARK_AWARE)
    page = open_page(viewport, f"{server.url}{UI}/messages/{email_id}", color_scheme="light")
    background = "() => getComputedStyle(document.body).backgroundColor"
    assert page.evaluate(background) == "rgb(247, 247, 248)"  # auto: the system's light
    with page.expect_navigation():
        page.locator("#theme-select").select_option("dark")
    assert page.evaluate(background) == "rgb(19, 20, 23)"
    expect(page.frame_locator("#preview").locator("#hello")).to_be_visible()
    assert body_colours(page) == LIGHT  # the email's preview keeps its own switch
    page.goto(f"{server.url}{UI}/")
    expect(page.locator("#theme-select")).to_have_value("dark")
    assert page.evaluate(background) == "rgb(19, 20, 23)"  # remembered across pages
    with page.expect_navigation():
        page.locator("#theme-select").select_option("auto")
    assert page.evaluate(background) == "rgb(247, 247, 248)"


@pytest.mark.parametrize("viewport", SIZES)
def test_next_and_previous_inside_a_message_follow_the_list(server: EmulatorServer, api: httpx.Client,
                                                           open_page: Opener, viewport: ViewportSize) -> None:
    ids = [send(api, subject=f"Invoice {n}") for n in range(3)]
    other = send(api, subject="Welcome")
    page = open_page(viewport, f"{server.url}{UI}/messages/{other}")
    expect(page.locator("#newer")).to_have_count(0)  # the newest has nothing above it
    page.keyboard.press("j")
    expect(page.locator("#subject")).to_have_text("Invoice 2")
    page.locator("#older").click()
    expect(page.locator("#subject")).to_have_text("Invoice 1")
    page.keyboard.press("k")
    expect(page.locator("#subject")).to_have_text("Invoice 2")

    page.goto(f"{server.url}{UI}/?q=Invoice")  # a filtered list: its messages only
    page.locator(f'#rows tr.row[data-id="{ids[2]}"] .subject').click()
    expect(page.locator("#subject")).to_have_text("Invoice 2")
    expect(page.locator("#newer")).to_have_count(0)  # "Welcome" is not in this list
    page.locator("#older").click()
    page.locator("#older").click()
    expect(page.locator("#subject")).to_have_text("Invoice 0")
    expect(page.locator("#older")).to_have_count(0)
    expect(page.locator(".stepper [aria-disabled=true]")).to_have_text("↓ Older")
    page.keyboard.press("Escape")
    expect(page).to_have_url(f"{server.url}{UI}/?q=Invoice")


@pytest.mark.parametrize("viewport", SIZES)
def test_question_mark_shows_the_keyboard_shortcuts(server: EmulatorServer, api: httpx.Client,
                                                   open_page: Opener, viewport: ViewportSize) -> None:
    email_id = send(api)
    page = open_page(viewport, f"{server.url}{UI}/")
    help_dialog = page.locator("#help")
    expect(help_dialog).to_be_hidden()
    page.keyboard.press("?")
    expect(help_dialog).to_be_visible()
    expect(help_dialog).to_contain_text("Keyboard shortcuts")
    expect(help_dialog.locator("tr", has_text="older / newer message")).to_be_visible()
    dialog = box(page, "#help")
    assert dialog["x"] >= 0 and dialog["x"] + dialog["width"] <= viewport["width"]
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()

    message_url = f"{server.url}{UI}/messages/{email_id}"
    page.goto(message_url)
    page.locator("#help-open").click()
    expect(help_dialog).to_be_visible()
    page.keyboard.press("Escape")  # closes the help; it does not also leave the message
    expect(help_dialog).to_be_hidden()
    assert page.url == message_url
    page.keyboard.press("?")
    expect(help_dialog).to_be_visible()
    page.locator("#help-close").click()
    expect(help_dialog).to_be_hidden()
    page.keyboard.press("Escape")
    expect(page).to_have_url(f"{server.url}{UI}/")


@pytest.mark.parametrize("viewport", SIZES)
def test_switching_tabs_keeps_the_content_in_view(
        server: EmulatorServer, api: httpx.Client, open_page: Opener, viewport: ViewportSize) -> None:
    links = "".join(f'<p><a href="https://acme.dev/item/{n}">Item {n}</a></p>' for n in range(60))
    email_id = send(api, html=TALL + links, text="The text part")  # a long preview and a long Checks tab
    page = open_page(viewport, f"{server.url}{UI}/messages/{email_id}")
    expect(page.locator("#preview")).to_have_attribute("style", re.compile(r"height: \d{4}px"))
    page.evaluate("() => window.scrollTo(0, 2500)")
    assert page.evaluate("() => window.scrollY") == 2500
    page.keyboard.press("7")
    expect(page.locator("#panel-checks")).to_be_visible()
    expect(page.locator("#check-html-title")).to_be_in_viewport()  # its start, not the middle of it
    header, tabs = box(page, "#top"), box(page, ".tabs")
    assert header["y"] + header["height"] <= tabs["y"] + 1 < viewport["height"]  # not under the header
    page.keyboard.press("2")
    expect(page.locator("#text-part")).to_be_in_viewport()


def test_on_a_phone_the_header_is_one_row_with_a_menu(server: EmulatorServer, api: httpx.Client,
                                                     open_page: Opener) -> None:
    page = open_page(PHONE, f"{server.url}{UI}/")
    assert box(page, "#top")["height"] <= 56
    expect(page.locator("#sections")).to_be_hidden()
    menu = page.locator("#menu summary")
    expect(menu).to_contain_text("Outbox")
    menu.click()
    links = page.locator("#menu .menu-sections a")
    expect(links).to_have_text(["Outbox", "Received", "Inboxes", "Webhooks", "Contacts", "Broadcasts", "Logs",
                                "Automations", "OAuth"])
    for link in links.all():
        expect(link).to_be_in_viewport()
    page.locator("#rows").click(position={"x": 5, "y": 5})  # elsewhere: the menu closes
    expect(links.first).to_be_hidden()
    menu.click()
    with page.expect_navigation():
        links.filter(has_text="Webhooks").click()
    expect(page.locator("#menu summary")).to_contain_text("Webhooks")
    assert box(page, "#top")["height"] <= 56


def test_on_a_desktop_the_sections_are_one_row(server: EmulatorServer, api: httpx.Client,
                                               open_page: Opener) -> None:
    page = open_page(DESKTOP, f"{server.url}{UI}/")
    expect(page.locator("#menu")).to_be_hidden()
    tops = {round(box.bounding_box()["y"]) for box in page.locator("#sections a").all()}  # type: ignore[index]
    assert len(tops) == 1 and box(page, "#top")["height"] <= 60
    page.set_viewport_size({"width": 760, "height": 800})  # too narrow for the row: the menu stands in
    expect(page.locator("#menu")).to_be_visible()
    expect(page.locator("#sections")).to_be_hidden()
    assert box(page, "#top")["height"] <= 60


def test_on_a_phone_tabs_scroll_and_headers_stack(server: EmulatorServer, api: httpx.Client,
                                                 open_page: Opener) -> None:
    email_id = send(api, html=RECEIPT)
    page = open_page(PHONE, f"{server.url}{UI}/messages/{email_id}")
    tabs = page.locator('[role="tab"]')
    expect(tabs).to_have_count(7)
    assert len({round(tab.bounding_box()["y"]) for tab in tabs.all()}) == 1  # type: ignore[index]  # one row
    assert page.locator(".tabs").evaluate("t => t.scrollWidth > t.clientWidth")
    page.locator("#tab-checks").click()
    expect(page.locator("#tab-checks")).to_be_in_viewport()
    expect(page.locator("#panel-checks")).to_be_visible()
    page.locator("#tab-headers").click()
    row = page.locator("table.headers tr", has_text="Message-ID")
    name, value = row.locator("th").bounding_box(), row.locator("td").bounding_box()
    assert name and value
    assert value["y"] >= name["y"] + name["height"] - 1 and abs(value["x"] - name["x"]) < 2  # below its name
    assert value["width"] > 300
    assert page.evaluate(OVERFLOW) == 0


@pytest.mark.parametrize("viewport", SIZES)
def test_the_inboxes_list_keeps_its_column_labels(
        server: EmulatorServer, api: httpx.Client, open_page: Opener, viewport: ViewportSize) -> None:
    domain = {"name": DOMAIN, "capabilities": {"receiving": "enabled"}}
    assert api.post("/domains", json=domain).status_code == 201
    assert api.post("/inboxes", json={"email_address": ADDRESS, "name": "Support"}).status_code in (200, 201)
    page = open_page(viewport, f"{server.url}{UI}/inboxes")
    address = page.locator("#inboxes tr.row td", has_text=ADDRESS)
    expect(address).to_be_visible()
    if viewport is DESKTOP:
        expect(page.locator("#inboxes thead th", has_text="Address")).to_be_visible()
        return
    expect(page.locator("#inboxes thead")).to_be_hidden()
    labels = page.locator("#inboxes tr.row td").evaluate_all(
        "cells => cells.map(c => getComputedStyle(c, '::before').content)")
    assert labels == ['"Inbox"', '"Address"', '"Unread"', '"Drafts"', '"Last received"']
    cell = address.bounding_box()
    assert cell and cell["height"] > 30  # the label's line above the value


def test_a_message_opened_from_a_search_that_is_no_longer_valid_steps_through_the_whole_list(
        server: EmulatorServer, api: httpx.Client) -> None:
    first, second = send(api, subject="First"), send(api, subject="Second")
    page = httpx.get(f"{server.url}{UI}/messages/{second}?q=status:lost")
    assert page.status_code == 200
    assert f'href="{UI}/" id="back"' in page.text
    assert f'href="{UI}/messages/{first}" id="older"' in page.text
