"""Working through mail in a real Chromium, on a desktop (1280×800) and a phone (390×844): deleting one
message, a selection, a search's results or all mail (the rest stays), resetting the emulator (its
--scenario comes back), read and unread (list header, page title, bold rows), Send now, notifications."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from emulator.testing import EmulatorServer
from tests.conftest import AUTH, SCREENS
from tests.ui_helpers import BROWSER, running_server
from tests.ui_helpers import send_titled as send

pytestmark = BROWSER
UI = "/_emulator/ui"


@pytest.fixture(params=SCREENS, ids=["desktop", "phone"])
def viewport(request: pytest.FixtureRequest) -> ViewportSize:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def page(screen_page: Page, api: httpx.Client) -> Page:
    return screen_page


def open_list(page: Page, server: EmulatorServer, query: str = "") -> None:
    page.goto(f"{server.url}{UI}/{query}")
    expect(page.locator("#live")).to_have_class("live on")


def subjects(page: Page) -> list[str]:
    return page.locator("#rows tr.row .subject").all_inner_texts()


def fits_the_screen(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], width  # type: ignore[index]


def test_delete_one_from_the_message_view_keeps_the_rest(page: Page, server: EmulatorServer,
                                                         api: httpx.Client) -> None:
    assert api.post("/domains", json={"name": "acme.dev"}).status_code == 201
    keep = send(api, "Keep me")
    doomed = send(api, "Delete me")
    page.goto(f"{server.url}{UI}/messages/{doomed}")
    button = page.locator("#delete-message")
    expect(button).to_be_visible()
    assert button.bounding_box()["y"] < 844  # type: ignore[index]  # without scrolling
    with page.expect_navigation():
        button.click()
    expect(page.locator("#notice")).to_have_text("Deleted 1 email.")
    assert subjects(page) == ["Keep me"]
    assert api.get(f"/emails/{doomed}").status_code == 404
    assert api.get(f"/emails/{keep}").status_code == 200
    assert [d["name"] for d in api.get("/domains").json()["data"]] == ["acme.dev"]


def test_delete_the_selected_rows(page: Page, server: EmulatorServer, api: httpx.Client) -> None:
    for n in range(4):
        send(api, f"Mail {n}")
    open_list(page, server)
    expect(page.locator("#picked")).to_have_text("None selected")
    expect(page.locator("#delete-selected")).to_be_disabled()
    boxes = page.locator('#rows input[name="id"]')
    boxes.nth(0).check()
    boxes.nth(2).click(modifiers=["Shift"])  # a range: rows 1 to 3
    expect(page.locator("#picked")).to_have_text("3 selected")
    assert page.url.endswith(f"{UI}/")  # picking a row did not open it
    row = page.locator("#rows tr.row").nth(0).bounding_box()
    box = boxes.nth(0).bounding_box()
    assert row and box and row["x"] <= box["x"] and box["x"] + box["width"] <= row["x"] + row["width"]
    fits_the_screen(page)
    with page.expect_navigation():
        page.locator("#delete-selected").click()
    expect(page.locator("#notice")).to_have_text("Deleted 3 emails.")
    assert subjects(page) == ["Mail 0"]
    expect(page.locator("#total")).to_have_text("1")


def test_x_picks_the_highlighted_row(page: Page, server: EmulatorServer, api: httpx.Client) -> None:
    send(api, "Older")
    send(api, "Newer")
    open_list(page, server)
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("x")
    expect(page.locator("#picked")).to_have_text("1 selected")
    expect(page.locator('#rows tr.row:has-text("Older") input[name="id"]')).to_be_checked()
    page.keyboard.press("x")
    expect(page.locator('#rows tr.row:has-text("Older") input[name="id"]')).not_to_be_checked()


def test_delete_the_results_of_a_search(page: Page, server: EmulatorServer, api: httpx.Client) -> None:
    for n in range(3):
        send(api, f"Invoice {n}")
    send(api, "Newsletter")
    open_list(page, server)
    page.locator("#search").fill("subject:invoice")
    with page.expect_navigation():
        page.locator("#search").press("Enter")
    expect(page.locator("#count")).to_have_text("3 matches")
    button = page.locator("#delete-results")
    expect(button).to_have_text("Delete these 3 results")
    with page.expect_navigation():
        button.click()
    expect(page.locator("#notice")).to_have_text("Deleted 3 emails.")
    expect(page.locator("#count")).to_have_text("0 matches")
    page.get_by_role("link", name="Clear").click()
    expect(page.locator("#rows tr.row")).to_have_count(1)
    assert subjects(page) == ["Newsletter"]


def test_delete_all_mail_keeps_domains_and_webhooks(page: Page, server: EmulatorServer,
                                                    api: httpx.Client) -> None:
    assert api.post("/domains", json={"name": "acme.dev"}).status_code == 201
    assert api.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/x",
                                       "events": ["email.sent"]}).status_code == 201
    send(api, "One")
    send(api, "Two")
    open_list(page, server)
    messages = []
    page.once("dialog", lambda dialog: messages.append(dialog.message))
    with page.expect_navigation():
        page.get_by_role("button", name="Delete all 2 emails").click()
    assert "Delete all 2 sent emails?" in messages[0] and "templates stay" in messages[0]
    expect(page.locator("#rows tr.none")).to_contain_text("No messages yet")
    expect(page.locator("#notice")).to_have_text("Deleted 2 emails.")
    assert len(api.get("/domains").json()["data"]) == 1 and len(api.get("/webhooks").json()["data"]) == 1


@pytest.fixture
def seeded() -> Iterator[EmulatorServer]:
    with running_server(seed_file="basic") as running:
        yield running


def test_reset_emulator_is_separate_and_reloads_the_scenario(browser: Browser, seeded: EmulatorServer,
                                                             viewport: ViewportSize) -> None:
    with httpx.Client(base_url=seeded.url, headers=AUTH, timeout=30) as api:
        seeded_domains = [d["name"] for d in api.get("/domains").json()["data"]]
        assert seeded_domains
        assert api.post("/domains", json={"name": "added-later.dev"}).status_code == 201
        send(api, "Before the reset")
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        messages: list[str] = []
        page.on("dialog", lambda dialog: (messages.append(dialog.message), dialog.accept()))
        page.goto(f"{seeded.url}{UI}/")
        reset, delete_all = page.locator("#reset-emulator button"), page.locator("#delete-all button")
        expect(reset).to_have_text("Reset emulator…")
        assert reset.bounding_box() != delete_all.bounding_box()
        with page.expect_navigation():
            reset.click()
        assert "--scenario" in messages[0] and "domains" in messages[0]
        expect(page.locator("#rows tr.none")).to_be_visible()
        assert [d["name"] for d in api.get("/domains").json()["data"]] == seeded_domains
        context.close()


def test_read_and_unread_in_the_header_the_title_and_the_rows(page: Page, server: EmulatorServer,
                                                              api: httpx.Client) -> None:
    first = send(api, "First")
    send(api, "Second")
    open_list(page, server)
    expect(page).to_have_title("(2) Outbox · Resend emulator")
    expect(page.locator("#unread-count")).to_have_text("2 unread")
    assert page.locator("#rows tr.unread").count() == 2
    weight = "s => getComputedStyle(document.querySelector(s)).fontWeight"  # in one go: rows refresh live
    bold = page.evaluate(weight, "#rows tr.unread .subject")
    page.locator("#rows tr.row", has_text="First").locator(".subject").click()
    expect(page.locator("#subject")).to_have_text("First")
    page.go_back()
    page.reload()
    expect(page).to_have_title("(1) Outbox · Resend emulator")
    expect(page.locator("#rows tr.row", has_text="First")).not_to_have_class("row unread")
    plain = page.evaluate(weight, "#rows tr.row:not(.unread) .subject")
    assert int(bold) > int(plain)
    # Mark unread from the message view: back to the list, unread again.
    page.goto(f"{server.url}{UI}/messages/{first}")
    with page.expect_navigation():
        page.locator("#mark-unread").click()
    expect(page.locator("#unread-count")).to_have_text("2 unread")
    # Bulk: select all, mark read.
    page.locator("#pick-all").check()
    with page.expect_navigation():
        page.get_by_role("button", name="Mark read", exact=True).click()
    expect(page.locator("#unread-count")).to_have_text("0 unread")
    expect(page).to_have_title("Outbox · Resend emulator")
    # New mail arrives live: counted at once, in the header and the title.
    expect(page.locator("#live")).to_have_class("live on")
    send(api, "Third")
    expect(page.locator("#rows tr.unread")).to_have_count(1)
    expect(page).to_have_title("(1) Outbox · Resend emulator")
    expect(page.locator("#unread-count")).to_have_text("1 unread")
    page.locator("#search").fill("is:unread")
    with page.expect_navigation():
        page.locator("#search").press("Enter")
    assert subjects(page) == ["Third"]


def test_send_now_beside_cancel(page: Page, server: EmulatorServer, api: httpx.Client) -> None:
    later = send(api, "Later", scheduled_at="in 2 hours")
    other = send(api, "Also later", scheduled_at="in 3 hours")
    open_list(page, server)
    row = page.locator("#rows tr.row", has_text="Also later")
    send_now, cancel = row.get_by_role("button", name="Send now"), row.get_by_role("button", name="Cancel")
    expect(send_now).to_be_visible()
    expect(cancel).to_be_visible()
    with page.expect_navigation():
        send_now.click()
    with page.expect_navigation():
        page.locator("#confirm-act").click()  # the confirmation step (issue 39)
    expect(page.locator("#rows tr.row", has_text="Also later").locator(".badge")).to_have_text("sent")
    assert api.get(f"/emails/{other}").json()["last_event"] == "sent"
    page.goto(f"{server.url}{UI}/messages/{later}")
    with page.expect_navigation():
        page.locator("#send-now").click()
    with page.expect_navigation():
        page.locator("#confirm-act").click()
    expect(page.locator("#status-slot .badge")).to_have_text("sent")
    sent = api.get(f"/emails/{later}").json()
    now = api.get("/_emulator/clock").json()["now"]  # sent at the emulator's current time
    assert sent["last_event"] == "sent" and sent["scheduled_at"] == f"{now[:10]} {now[11:19]}+00"


NOTIFICATIONS = """
window.__notes = [];
window.__asked = 0;
class FakeNotification {
  constructor(title, options) { window.__notes.push({title: title, body: options && options.body}); }
  static requestPermission() { window.__asked += 1; FakeNotification.permission = "granted";
                               return Promise.resolve("granted"); }
}
FakeNotification.permission = "default";
window.Notification = FakeNotification;
document.hasFocus = () => false;
"""


def test_notifications_are_opt_in_and_announce_new_mail(page: Page, server: EmulatorServer,
                                                        api: httpx.Client) -> None:
    page.add_init_script(NOTIFICATIONS)
    open_list(page, server)
    button = page.locator("#notify")
    expect(button).to_have_text("Notify me of new mail")
    send(api, "Before opting in")
    expect(page.locator("#rows tr.row")).to_have_count(1)
    assert page.evaluate("[window.__asked, window.__notes.length]") == [0, 0]  # nothing asked unasked
    button.click()
    expect(button).to_have_text("Notifying of new mail")
    assert page.evaluate("window.__asked") == 1
    send(api, "Your order shipped")
    expect(page.locator("#rows tr.row")).to_have_count(2)
    page.wait_for_function("window.__notes.length === 1")
    assert page.evaluate("window.__notes") == [{"title": "New mail: Your order shipped",
                                                "body": "From Acme orders@acme.dev"}]
