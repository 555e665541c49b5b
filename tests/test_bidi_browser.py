"""Right-to-left and hidden characters in a real Chromium at 1280×800, 768×1024 and 390×844: an RTL subject
is its own run (its "1 file" chip stays after it), a U+202E is shown as a marked token wherever its name,
subject or filename appears, and the Checks tab (and the /qa JSON) lists it."""

from __future__ import annotations

import base64

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, ViewportSize, expect

from emulator.testing import EmulatorServer
from tests.ui_helpers import BROWSER

pytestmark = BROWSER
UI = "/_emulator/ui"
SIZES = [pytest.param({"width": 1280, "height": 800}, id="desktop"),
         pytest.param({"width": 768, "height": 1024}, id="tablet"),
         pytest.param({"width": 390, "height": 844}, id="phone")]
RTL_SUBJECTS = ["שלום, ההזמנה שלך 1042 נשלחה היום", "مرحبا، تم شحن طلبك رقم 1042 اليوم"]
RLO = "\u202e"
TRICK = f"report{RLO}slx.pdf"  # reads "reportfdp.xls" when the override acts
OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
PDF = base64.b64encode(b"%PDF-1.4").decode()


def send(api: httpx.Client, subject: str, filename: str = "invoice.pdf") -> str:
    response = api.post("/emails", json={
        "from": "Acme <orders@acme.dev>", "to": ["ada@lovelace.dev"], "subject": subject,
        "html": "<p>Hi</p>", "attachments": [{"filename": filename, "content": PDF}]})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def open_page(browser: Browser, viewport: ViewportSize, url: str) -> Page:
    page = browser.new_context(viewport=viewport, is_mobile=viewport["width"] < 500).new_page()
    page.goto(url)
    return page


def text_boxes(locator: Locator) -> list[dict[str, float]]:
    """The box of each character of the element's text (where the bidi algorithm put it)."""
    return list(locator.evaluate("""(el) => {
      const boxes = [], range = document.createRange();
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < node.length; i++) {
          range.setStart(node, i); range.setEnd(node, i + 1);
          const box = range.getBoundingClientRect();
          if (box.width > 0 && node.data[i].trim()) boxes.push({left: box.left, right: box.right});
        }
      }
      return boxes;
    }"""))


@pytest.mark.parametrize("viewport", SIZES)
def test_an_rtl_subject_keeps_its_file_chip_at_its_end(browser: Browser, server: EmulatorServer,
                                                        api: httpx.Client, viewport: ViewportSize) -> None:
    ids = [send(api, subject) for subject in RTL_SUBJECTS]
    page = open_page(browser, viewport, f"{server.url}{UI}/")
    try:
        for email_id in ids:
            row = page.locator(f'#rows tr.row[data-id="{email_id}"]')
            subject, chip = row.locator("a.subject"), row.locator(".clip")
            expect(chip).to_have_text("1 file")
            expect(chip).to_be_visible()
            subject_box, chip_box = subject.bounding_box(), chip.bounding_box()
            assert subject_box and chip_box
            assert chip_box["x"] >= subject_box["x"] + subject_box["width"] - 0.5  # after it, not inside it
            cell = row.locator(".c-subject").bounding_box()
            assert cell and chip_box["x"] + chip_box["width"] <= cell["x"] + cell["width"] + 0.5  # all shown
            # Every character of the chip (the "1" too, which an unisolated RTL run pulls to its side)
            # lies right of every character of the subject.
            subject_right = max(box["right"] for box in text_boxes(subject))
            assert min(box["left"] for box in text_boxes(chip)) >= subject_right - 0.5
    finally:
        page.context.close()


@pytest.mark.parametrize("viewport", SIZES)
def test_a_direction_override_is_shown_and_listed_by_the_checks_tab(browser: Browser, server: EmulatorServer,
                                                                     api: httpx.Client,
                                                                     viewport: ViewportSize) -> None:
    email_id = send(api, f"Your {TRICK} is attached", filename=TRICK)
    marked = "report⟨U+202E⟩slx.pdf"
    page = open_page(browser, viewport, f"{server.url}{UI}/")
    try:
        subject = page.locator(f'#rows tr.row[data-id="{email_id}"] a.subject')
        expect(subject).to_have_text(f"Your {marked} is attached")
        expect(subject.locator(".ctl")).to_have_attribute("title", "U+202E RIGHT-TO-LEFT OVERRIDE")
        page.goto(f"{server.url}{UI}/messages/{email_id}")
        expect(page.locator("#subject")).to_have_text(f"Your {marked} is attached")
        expect(page.locator("#subject .ctl")).to_be_visible()
        name = page.locator("#attachments .att-name")
        expect(name).to_have_text(marked)
        assert RLO not in name.evaluate("el => el.innerHTML")
        page.locator("#tab-checks").click()
        table = page.locator("#controls-table")
        expect(page.locator("#check-controls .badge")).to_have_text("error")
        expect(table.locator("tr", has_text="Attachment")).to_contain_text("U+202E")
        expect(table.locator("tr", has_text="Attachment")).to_contain_text(marked)
        expect(table.locator("tr", has_text="Subject")).to_contain_text("12")  # its position in the subject
        assert page.evaluate(OVERFLOW) == 0
    finally:
        page.context.close()
    findings = api.get(f"/_emulator/outbox/{email_id}/qa").json()["controls"]["findings"]
    assert {(f["where"], f["field"], f["character"], f["position"]) for f in findings} == {
        ("header", "Subject", "U+202E", 12), ("attachment", "filename", "U+202E", 7)}
