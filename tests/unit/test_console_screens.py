"""The screens a console form leaves for the GET page it redirects to (post/redirect/get, issue 50 item 4):
a token finds its screen only on its own page and only in its own session, a new key is handed out once,
and a session keeps a bounded number of them."""

from __future__ import annotations

from carnet.entrypoints.http.console.screens import Screen, Screens


def test_a_token_finds_its_screen_again_and_again_on_its_page_only() -> None:
    screens = Screens()
    token = screens.keep(Screen("member", subject="ADH-1", mode="search", query="adresse"))
    assert "ADH-1" not in token and len(token) >= 20
    first, again = screens.show(token, page="member"), screens.show(token, page="member")  # Back, Reload
    assert first == again and first is not None and first.query == "adresse"
    assert screens.show(token, page="dpo") is None  # not another page's
    assert screens.show("", page="member") is None and screens.show("made-up", page="member") is None
    assert Screens().show(token, page="member") is None  # another session holds other tokens


def test_a_new_key_is_shown_by_the_first_page_only() -> None:
    screens = Screens()
    token = screens.keep(Screen("admin", secret="crn_abc_secret"))
    shown = screens.show(token, page="admin")
    assert shown is not None and shown.secret == "crn_abc_secret"
    later = screens.show(token, page="admin")
    assert later is not None and later.secret is None


def test_a_session_keeps_its_latest_screens() -> None:
    screens = Screens(cap=3)
    tokens = [screens.keep(Screen("member", subject=f"ADH-{i}")) for i in range(5)]
    assert len(set(tokens)) == 5 and len(screens) == 3
    assert screens.show(tokens[0], page="member") is None and screens.show(tokens[1], page="member") is None
    kept = screens.show(tokens[4], page="member")
    assert kept is not None and kept.subject == "ADH-4"
