"""Rendering: `{{{KEY}}}` substitution, fallbacks, send-time variable rules, and `resolve_template`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from emulator.core.errors import ApiError
from emulator.resources.templates.render import (
    MAX_NUMBER,
    RenderedTemplate,
    check_send_variables,
    format_value,
    render,
    resolve_values,
)
from emulator.resources.templates.service import resolve_template
from tests.templates_helpers import order_template

KEYS = st.from_regex(r"[A-Za-z0-9_]{1,12}", fullmatch=True)
VALUES = st.one_of(st.text(max_size=40), st.integers(-MAX_NUMBER, MAX_NUMBER))
# Text that cannot contain a placeholder of its own.
LITERAL = st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=30)


def resolve(client: TestClient, template: Any) -> RenderedTemplate:
    async def run() -> RenderedTemplate:
        async with client.app.state.emu.transaction("default") as tx:  # type: ignore[attr-defined]
            return await resolve_template(tx, template)

    return client.portal.call(run)  # type: ignore[union-attr, no-any-return]


def failure(client: TestClient, template: Any) -> tuple[int, str, str]:
    with pytest.raises(ApiError) as caught:
        resolve(client, template)
    return caught.value.status, caught.value.kind.name, caught.value.message


def published(client: TestClient, **overrides: Any) -> str:
    template_id = str(client.post("/templates", json=order_template(**overrides)).json()["id"])
    assert client.post(f"/templates/{template_id}/publish").status_code == 200
    return template_id


# ---- the renderer ------------------------------------------------------------------------------

def test_render_substitutes_triple_braces_only() -> None:
    assert render("{{{A}}} {{ A }} {{{ A }}} {{{B}}}", {"A": "x"}) == "x {{ A }} x {{{B}}}"


def test_values_are_inserted_unescaped() -> None:
    assert render("<p>{{{A}}}</p>", {"A": "<b>&</b>"}) == "<p><b>&</b></p>"


@pytest.mark.parametrize(("value", "text"), [(25, "25"), (25.0, "25"), (2.5, "2.5"), (-3, "-3"), ("", "")])
def test_numbers_print_as_javascript_does(value: Any, text: str) -> None:
    assert format_value(value) == text


@given(st.dictionaries(KEYS, VALUES, max_size=5), st.lists(st.one_of(LITERAL, KEYS.map("{{{%s}}}".__mod__))))
def test_render_replaces_exactly_the_known_placeholders(values: dict[str, Any], parts: list[str]) -> None:
    source = "".join(parts)
    expected = "".join(
        format_value(values[part[3:-3]]) if part.startswith("{{{") and part[3:-3] in values else part
        for part in parts
    )
    assert render(source, values) == expected


@given(LITERAL)
def test_render_leaves_text_without_placeholders_alone(text: str) -> None:
    assert render(text, {"A": "x"}) == text


@given(KEYS, st.text(max_size=40))
def test_render_is_one_pass(key: str, value: str) -> None:
    # A value that looks like a placeholder is content, not a template.
    placeholder = "{{{" + key + "}}}"
    assert render(placeholder, {key: placeholder, "OTHER": value}) == placeholder


DECLARED = st.lists(st.tuples(KEYS, st.sampled_from(["string", "number"]), st.booleans()),
                   unique_by=lambda t: t[0])


@given(DECLARED, st.data())
def test_every_declared_variable_resolves_or_is_reported(declared: list[tuple[str, str, bool]],
                                                         data: st.DataObject) -> None:
    fallbacks = {"string": "fb", "number": 7}
    variables = [{"key": key, "type": kind, "fallback_value": fallbacks[kind] if has else None}
                 for key, kind, has in declared]
    keys = [key for key, _, _ in declared]
    given_keys = data.draw(st.sets(st.sampled_from(keys)) if keys else st.just(set()))
    values = {key: ("v" if kind == "string" else 1) for key, kind, _ in declared if key in given_keys}
    missing = [key for key, _, has in declared if key not in given_keys and not has]
    if missing:
        with pytest.raises(ApiError) as caught:
            resolve_values(variables, values)
        assert all(f"`{key}`" in caught.value.message for key in missing)
    else:
        resolved = resolve_values(variables, values)
        assert set(resolved) == {key for key, _, _ in declared}


@pytest.mark.parametrize("variables", [
    [], {"bad-key": "x"}, {"K" * 51: "x"}, {"A": True}, {"A": None}, {"A": {"x": 1}}, {"A": "x" * 2001},
    {"A": MAX_NUMBER + 1}, {"A": float("inf")},
])
def test_send_variables_are_checked(variables: Any) -> None:
    with pytest.raises(ApiError) as caught:
        check_send_variables(variables)
    assert (caught.value.status, caught.value.kind.name) == (422, "validation_error")


def test_send_variables_at_the_limits_are_accepted() -> None:
    values = {"A": "x" * 2000, "B": MAX_NUMBER, "C": -MAX_NUMBER, "D": 0.5, "K" * 50: ""}
    assert check_send_variables(values) == values
    assert check_send_variables(None) == {}


# ---- resolve_template (what POST /emails calls) ------------------------------------------------

def test_resolve_by_alias_with_fallbacks(client: TestClient) -> None:
    template_id = published(client, reply_to="help@acme.dev", subject="Your {{{PRODUCT}}}")
    assert resolve(client, {"id": "order-confirmation"}) == RenderedTemplate(
        template_id=template_id, from_="Acme Store <store@mail.acme.dev>", subject="Your item",
        reply_to=["help@acme.dev"], html="<p>Name: item</p><p>Total: 25</p>", text="Name: item\nTotal: 25",
    )


def test_resolve_with_given_values(client: TestClient) -> None:
    template_id = published(client)
    variables = {"PRODUCT": "Vintage Macintosh", "PRICE": 499}
    rendered = resolve(client, {"id": template_id, "variables": variables})
    assert rendered.html == "<p>Name: Vintage Macintosh</p><p>Total: 499</p>"
    assert rendered.text == "Name: Vintage Macintosh\nTotal: 499"


def test_resolve_without_template_defaults(client: TestClient) -> None:
    response = client.post("/templates", json={"name": "bare", "html": "<p>hi</p>"})
    template_id = response.json()["id"]
    client.post(f"/templates/{template_id}/publish")
    expected = RenderedTemplate(template_id, None, None, None, "<p>hi</p>", None)
    assert resolve(client, {"id": template_id}) == expected


def test_sends_use_the_published_version_not_the_draft(client: TestClient) -> None:
    template_id = published(client)
    client.patch(f"/templates/{template_id}", json={"html": "<p>draft {{{PRODUCT}}}</p>"})
    assert resolve(client, {"id": template_id}).html == "<p>Name: item</p><p>Total: 25</p>"
    client.post(f"/templates/{template_id}/publish")
    assert resolve(client, {"id": template_id}).html == "<p>draft item</p>"


def test_unpublished_template_cannot_be_used(client: TestClient) -> None:
    client.post("/templates", json=order_template())
    status, name, message = failure(client, {"id": "order-confirmation"})
    assert (status, name) == (422, "validation_error") and "not published" in message


@pytest.mark.parametrize("ref", ["order-confirmation", "00000000-0000-4000-8000-000000000000"])
def test_unknown_or_deleted_template_is_not_found(client: TestClient, ref: str) -> None:
    template_id = published(client)
    client.delete(f"/templates/{template_id}")
    assert failure(client, {"id": ref}) == (404, "not_found", "Template not found")


def test_missing_variable_without_fallback(client: TestClient) -> None:
    published(client, variables=[{"key": "PRODUCT", "type": "string"}, {"key": "PRICE", "type": "number"}])
    status, name, message = failure(client, {"id": "order-confirmation", "variables": {"PRICE": 1}})
    assert (status, name) == (422, "validation_error")
    assert "`PRODUCT`" in message and "`PRICE`" not in message


@pytest.mark.parametrize("variables", [{"PRICE": "499"}, {"PRODUCT": 5}])
def test_value_of_the_wrong_type(client: TestClient, variables: dict[str, Any]) -> None:
    published(client)
    status, name, _ = failure(client, {"id": "order-confirmation", "variables": variables})
    assert (status, name) == (422, "validation_error")


@pytest.mark.parametrize(("template", "status", "name"), [
    ("order-confirmation", 422, "validation_error"), ({}, 422, "missing_required_field"),
    ({"id": 5}, 422, "validation_error"), ({"id": ""}, 422, "validation_error"),
    ({"id": "order-confirmation", "variables": ["PRODUCT"]}, 422, "validation_error"),
])
def test_malformed_template_object(client: TestClient, template: Any, status: int, name: str) -> None:
    published(client)
    assert failure(client, template)[:2] == (status, name)


def test_undeclared_values_fill_placeholders(client: TestClient) -> None:
    published(client, html="<p>{{{EXTRA}}} {{{UNSET}}}</p>", variables=[])
    rendered = resolve(client, {"id": "order-confirmation", "variables": {"EXTRA": 1}})
    assert rendered.html == "<p>1 {{{UNSET}}}</p>"
