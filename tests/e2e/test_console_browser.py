"""The console in a real browser: Debian's Chromium (``/usr/bin/chromium``), headless, driven by
Playwright (whose own browser download is never used), against a real server on loopback.

What a user does (log in, look a member up, see a superseded fact shown as such, search, preview
``assemble``, export, erase and read the receipt) and what must be refused (a form without its CSRF
token, a session after logout, an ``agent`` on DPO pages, another tenant's member, a revoked key's
session). Every page is checked with axe-core (no serious or critical violation) and saved as a
screenshot under ``artifacts/console/`` (``TEST_ARTIFACTS`` moves it: not a ``CARNET_`` name, which the
settings would refuse as unknown). The console's images in docs/ are copies of these (docs/console.md)."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.domain.intake import Message
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.ports import Embedder
from carnet.services.apikeys import Principal, authenticate, create_key
from carnet.services.memories.remember import NewMemory
from carnet.services.procedures import Proposal
from carnet.settings.root import Settings

playwright_sync = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
AXE_DIR = Path(__file__).parent / "axe"
AXE = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
TENANT, OTHER_TENANT = "assur-nord", "banque-sud"
MEMBER, ERASED, HELD = "ADH-7731", "ADH-9001", "ADH-5550"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (apt-get install chromium)")


def _artifacts() -> Path:
    out = Path(os.environ.get("TEST_ARTIFACTS", ROOT / "artifacts")) / "console"
    out.mkdir(parents=True, exist_ok=True)
    return out


def _axe_source() -> str:
    if not AXE.exists():  # scripts/test.sh runs `npm ci` there; a bare pytest run does it here
        npm = shutil.which("npm")
        assert npm, "axe-core needs npm: cd tests/e2e/axe && npm ci"
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=AXE_DIR, check=True, timeout=120)
    return AXE.read_text()


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day + "T09:00:00+00:00")


def _seed(c: Container) -> dict[str, str]:
    def key(tenant: str, *roles: str) -> str:
        return create_key(c.deps.catalog, c.pepper, tenant=tenant, roles=list(roles))[0]

    keys = {"agent": key(TENANT, "agent"), "dpo": key(TENANT, "dpo"), "admin": key(TENANT, "admin"),
            "other": key(OTHER_TENANT, "agent", "dpo"), "supervisor": key(TENANT, "supervisor")}
    writer = authenticate(c.deps.catalog, c.pepper, keys["agent"])
    c.facade.propose_procedure(writer, proposal=Proposal(WATER_PROCEDURE, applies_when=("dégât des eaux",)))
    for day, text in (("2024-03-01", "Le membre habite à Lyon 7e."),
                      ("2025-01-10", "Le membre préfère être contacté par email le matin."),  # category preference
                      ("2025-02-02", "Le membre est malvoyant : courriers en gros caractères."),  # disability
                      ("2025-04-18", "Le membre est délégué syndical CFDT."),  # union: hidden from agents
                      ("2026-03-03", "Sinistre dégât des eaux SIN-2024-0815 ouvert le 3 mars, expert mandaté.")):
        c.facade.remember(writer, subject_id=MEMBER, items=[NewMemory(
            text=text, category="preference" if "préfère" in text else "note", occurred_at=_at(day))])
    moved = c.facade.remember(writer, subject_id=MEMBER, items=[NewMemory(
        text="Le membre habite maintenant à Villeurbanne.", category="adresse", occurred_at=_at("2026-09-15"))])
    assert moved[0].action == "superseded"
    c.facade.remember(writer, subject_id=ERASED, items=[NewMemory(text="Le membre a résilié son contrat auto."),
                                                        NewMemory(text="Le membre souhaite un rappel vendredi.")])
    c.facade.remember(writer, subject_id=HELD,
                      items=[NewMemory(text="Le membre a un litige sur le sinistre SIN-2025-0001.")])
    _dead_intake(c, writer)
    return keys


WATER_PROCEDURE = "Pour un dégât des eaux, toujours demander des photos avant d'envoyer l'expert."


def _dead_intake(c: Container, writer: Principal) -> None:
    """One intake of the tenant that ran out of attempts (no worker runs in this server)."""
    c.facade.submit_messages(writer, subject_id=MEMBER, session_id="appel-1", idempotency_key=None,
                             messages=[Message("user", "Je voudrais changer mon RIB.")])
    store, now = c.queue.store, c.deps.clock.now()
    [leased] = store.lease(owner="test", now=now, seconds=30)
    assert store.fail(leased.id, owner="test", reason="extraction_failed", now=now, retry_at=None)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("console")
    c = build(Settings(data_dir=root / "data", key_dir=root / "keys"), embedder=embedder)
    try:
        keys = _seed(c)
        with running(create_app(c)) as base:
            yield base, keys
    finally:
        c.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Tab:
    """One browser context (its own cookies) on the console, recording every URL it requests."""

    def __init__(self, browser: Any, base: str, axe: str) -> None:
        self.base, self._axe = base, axe
        self.context = browser.new_context(accept_downloads=True, locale="fr-FR")
        self.page = self.context.new_page()
        self.urls: list[str] = []
        self.page.on("request", lambda r: self.urls.append(r.url))

    def go(self, path: str) -> Any:
        return self.page.goto(self.base + path)

    def login(self, key: str) -> None:
        self.go("/console/login")
        self.page.fill("#api_key", key)
        self.submit("form.card button[type=submit]")

    def open_member(self, subject: str, *, section: str = "member") -> None:
        self.go(f"/console/{section}")
        self.page.fill("#subject_id", subject)
        self.submit("form.find button[type=submit]")

    def submit(self, button: str) -> Any:
        """Click a form's button and wait until the page it leads to has loaded, then return its response:
        a bare click does not wait for the navigation, and a read right after it can see the old page."""
        with self.page.expect_navigation(wait_until="load") as navigation:
            self.page.click(button)
        return navigation.value

    def check(self, name: str) -> None:
        """axe-core on the page as shown (no serious or critical violation), then its screenshot."""
        self.page.evaluate(self._axe)
        found = self.page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
            ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))}))")
        bad = [v for v in found if v["impact"] in ("serious", "critical")]
        self.page.screenshot(path=str(_artifacts() / f"{name}.png"), full_page=True)
        assert not bad, f"{name}: {bad}"

    def text(self) -> str:
        return str(self.page.inner_text("main"))

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser: Any, site: tuple[str, dict[str, str]]) -> Iterator[Tab]:
    t = Tab(browser, site[0], _axe_source())
    try:
        yield t
    finally:
        t.close()


def _keys(site: tuple[str, dict[str, str]]) -> dict[str, str]:
    return site[1]


def test_login_page_is_served_with_a_strict_policy_and_nothing_from_elsewhere(tab: Tab) -> None:
    response = tab.go("/console/login")
    headers = response.headers
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert headers["cache-control"] == "no-store" and headers["x-frame-options"] == "DENY"
    assert headers["strict-transport-security"] == "max-age=31536000" and headers["referrer-policy"] == "no-referrer"
    assert tab.page.locator("html").get_attribute("lang") == "fr" and "Connexion" in tab.text()
    tab.check("login")
    assert all(u.startswith(tab.base) for u in tab.urls), tab.urls  # no CDN, no font, no script


def test_member_view_shows_the_superseded_fact_as_such(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["agent"])
    assert tab.page.url.endswith("/console/member")
    cookie = next(c for c in tab.context.cookies() if c["name"] == "__Host-carnet-session")
    assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"
    tab.check("member-home")
    tab.open_member(MEMBER)
    old = tab.page.locator("li.status-superseded", has_text="Lyon 7e")
    assert old.count() == 1
    assert "Remplacé" in old.inner_text() and old.locator("del").count() == 1  # struck through, labelled
    link = old.locator("p.chain a")
    assert "Villeurbanne" in link.inner_text()
    new = tab.page.locator(str(link.get_attribute("href")))  # the chain links to the record that superseded it
    assert "En vigueur" in new.inner_text() and "Remplace" in new.inner_text()
    assert "5 enregistrements, dont 1 remplacé." in tab.text()
    tab.check("member")
    assert not any(MEMBER in u for u in tab.urls), "the member id went into a URL"


def test_special_categories_are_flagged_and_shown_as_the_tenants_policy_allows(
        tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["agent"])
    tab.open_member(MEMBER)
    # the card whose own text says it (another card's chain line may quote it)
    flagged = tab.page.locator("li.memory", has=tab.page.locator("p.text", has_text="malvoyant"))
    assert "Catégorie particulière : handicap" in flagged.inner_text()
    assert "syndical" not in tab.text()  # union membership: hidden from agents by the default policy
    tab.submit("header form[action$='/logout'] button")
    tab.login(_keys(site)["dpo"])
    tab.open_member(MEMBER, section="dpo")
    card = tab.page.locator("li.memory", has=tab.page.locator("p.text", has_text="syndical"))
    assert "Catégorie particulière : syndicat" in card.inner_text()


def test_search_and_assemble_preview_show_the_score_signals(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["agent"])
    tab.open_member(MEMBER)
    tab.page.fill("#search-q", "où habite le membre")
    tab.submit("form[action$='/member/search'] button")
    rows = tab.page.locator("table.ranked tbody tr")
    assert rows.count() >= 1 and "Villeurbanne" in rows.first.inner_text()
    assert "surtout" in rows.first.inner_text() and "Lyon 7e" not in tab.text()  # superseded: left out
    tab.check("member-search")
    tab.page.fill("#assemble-q", "dégât des eaux")
    tab.submit("form[action$='/member/assemble'] button")
    assert "Aperçu du contexte assemblé" in tab.text() and "SIN-2024-0815" in tab.text()
    tab.check("member-assemble")
    assert not any(MEMBER in u or "habite" in u for u in tab.urls)


def test_dpo_exports_erases_and_reads_the_receipt(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["dpo"])
    assert tab.page.url.endswith("/console/dpo")
    tab.check("dpo-home")
    tab.open_member(ERASED, section="dpo")
    assert "Conservation" in tab.text() and "résilié" in tab.text()
    tab.check("dpo-member")
    with tab.page.expect_download() as download:
        tab.page.click("form[action$='/dpo/export'] button")
    exported = json.loads(Path(download.value.path()).read_text())
    assert exported["format"] == "carnet.export.v1" and exported["subject_id"] == ERASED
    assert exported["count"] == 2 and exported["complete"] is True
    tab.page.fill("#erase-confirm", ERASED)
    tab.submit("form[action$='/dpo/erase'] button")
    text = tab.text()
    assert "Reçu d'effacement" in text and "Effacement complet et vérifié" in text
    assert "Enregistrements supprimés\n2" in text and ERASED not in text  # the receipt names a keyed hash only
    tab.page.click("details summary")
    receipt = json.loads(tab.page.inner_text("details pre"))
    assert receipt["complete"] is True and receipt["records_deleted"] == 2 and all(receipt["verified"].values())
    tab.check("dpo-receipt")
    tab.open_member(ERASED, section="dpo")
    assert "Aucun membre" in tab.text()


def test_dpo_holds_refuses_erasure_under_hold_releases_rectifies_and_ends_the_relationship(
        tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["dpo"])
    tab.open_member(HELD, section="dpo")
    tab.page.fill("#hold-ref", "LIT-2026-0042")
    tab.submit("form[action$='/dpo/hold'] button")
    assert "Le membre est sous gel juridique" in tab.text() and "LIT-2026-0042" in tab.text()
    tab.page.fill("#erase-confirm", HELD)
    refused = tab.submit("form[action$='/dpo/erase'] button")  # a refusal is a GET page too (Back works)
    assert refused.status == 409 and refused.request.method == "GET" and "gel juridique" in tab.text()
    assert re.search(r"/console/error\?view=[\w-]{20,}$", tab.page.url) and HELD not in tab.page.url
    tab.open_member(HELD, section="dpo")
    tab.submit("form[action$='/dpo/release'] button")
    assert "Le gel juridique est levé" in tab.text()
    # A text field written jj/mm/aaaa: Chromium draws <input type=date> in its own locale's order (06/30/2026
    # here under fr-FR, whatever the page's lang), so the console does not use it.
    assert tab.page.get_attribute("#ended-on", "type") == "text"
    assert tab.page.get_attribute("#ended-on", "placeholder") == "jj/mm/aaaa"
    tab.page.fill("#ended-on", "30/06/2026")
    tab.submit("form[action$='/dpo/relationship-end'] button")
    assert "30 juin 2026" in tab.page.inner_text("section.card dl")
    assert tab.page.input_value("#ended-on") == "30/06/2026"
    tab.page.click("li.memory details.rectify summary")
    tab.page.fill("li.memory textarea", "Le membre a un litige clos sur le sinistre SIN-2025-0001.")
    tab.submit("li.memory details.rectify form button")
    assert "L'enregistrement est rectifié" in tab.text() and "litige clos" in tab.text()
    tab.check("dpo-after-actions")
    assert not any(HELD in u for u in tab.urls)


def test_a_form_without_its_csrf_token_is_refused(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["agent"])
    tab.go("/console/member")
    tab.page.fill("#subject_id", MEMBER)
    tab.page.evaluate("document.querySelector('form.find input[name=csrf]').remove()")
    with tab.page.expect_response(lambda r: r.url.endswith("/console/member")) as answer:
        tab.submit("form.find button[type=submit]")
    assert answer.value.status == 403 and "anti-CSRF" in tab.text() and "Lyon" not in tab.text()
    tab.check("error-csrf")
    tab.go("/console/member")
    tab.page.fill("#subject_id", MEMBER)
    tab.page.evaluate("document.querySelector('form.find input[name=csrf]').value = 'forged'")
    with tab.page.expect_response(lambda r: r.url.endswith("/console/member")) as answer:
        tab.submit("form.find button[type=submit]")
    assert answer.value.status == 403


def test_a_session_is_refused_after_logout(tab: Tab, browser: Any, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["agent"])
    old = [c for c in tab.context.cookies() if c["name"] == "__Host-carnet-session"]
    tab.submit("header form[action$='/logout'] button")
    assert tab.page.url.endswith("/console/login")
    assert not [c for c in tab.context.cookies() if c["name"] == "__Host-carnet-session"]
    replay = browser.new_context()  # the old cookie, replayed: the server forgot it
    try:
        replay.add_cookies(old)
        page = replay.new_page()
        page.goto(tab.base + "/console/member")
        assert page.url.endswith("/console/login")
    finally:
        replay.close()


def test_an_agent_session_is_refused_on_dpo_pages(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["agent"])
    assert tab.page.locator("nav a[href$='/dpo']").count() == 0  # not offered
    assert tab.go("/console/dpo").status == 403 and "rôle" in tab.text()
    tab.check("error-forbidden")
    # A DPO form posted from an agent session (its CSRF token is valid): the facade refuses it.
    tab.go("/console/member")
    tab.page.evaluate(f"""() => {{ const f = document.querySelector('form.find');
        f.action = '/console/dpo/erase'; f.querySelector('#subject_id').value = '{MEMBER}';
        const c = document.createElement('input'); c.type = 'hidden'; c.name = 'confirm'; c.value = '{MEMBER}';
        f.appendChild(c); }}""")
    with tab.page.expect_response(lambda r: r.url.endswith("/console/dpo/erase")) as answer:
        page = tab.submit("form.find button[type=submit]")
    assert answer.value.status == 303 and page.status == 403 and "rôle" in tab.text()
    tab.open_member(MEMBER)
    assert "Villeurbanne" in tab.text()  # nothing was erased


def test_another_tenants_member_is_not_found(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["other"])
    tab.open_member(MEMBER)
    assert "Aucun membre avec cet identifiant" in tab.text() and "Villeurbanne" not in tab.text()
    tab.open_member(MEMBER, section="dpo")
    assert "Aucun membre avec cet identifiant" in tab.text()
    tab.check("error-not-found")


def test_admin_creates_a_key_shown_once_and_revoking_it_ends_its_session(
        tab: Tab, browser: Any, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["admin"])
    assert tab.page.url.endswith("/console/admin")
    tab.page.check("#role-agent")
    tab.page.fill("#key-name", "poste-12")
    tab.submit("form[action$='/admin/keys'] button")
    key = tab.page.inner_text("code.secret")
    assert key.startswith("crn_")
    tab.check("admin")
    assert "default" in tab.text()  # the retention classes in force
    assert "extraction_failed" in tab.page.inner_text("section[aria-labelledby=intakes-h]")
    other = Tab(browser, tab.base, _axe_source())
    try:
        other.login(key)
        assert other.page.url.endswith("/console/member")
        tab.go("/console/admin")
        assert key not in tab.text()  # shown once
        key_id = key.split("_")[1]
        tab.submit(f"button[aria-label='Révoquer {key_id}']")
        assert "La clé est révoquée" in tab.text()
        other.go("/console/member")
        assert other.page.url.endswith("/console/login")
    finally:
        other.close()


def test_admin_sends_a_dead_intake_back_and_sees_the_metrics(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["admin"])
    intakes = tab.page.locator("section[aria-labelledby=intakes-h]")
    assert "Lettres mortes\n1" in intakes.inner_text()
    tab.submit("section[aria-labelledby=intakes-h] td form button")
    assert "1 ingestion renvoyée en file" in tab.text()
    assert "Lettres mortes\n0" in intakes.inner_text() and "En attente\n1" in intakes.inner_text()
    metrics = tab.page.inner_text("section[aria-labelledby=metrics-h]")
    assert "2xx" in metrics
    tab.check("admin-intakes")


def test_audit_trail_page_checks_the_chain_and_lists_console_actions(
        tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["dpo"])
    tab.go("/console/audit")
    text = tab.text()
    assert "Connexion à la console" in text and "console.login" not in text  # actions in words, codes in details
    verified = int(re.search(r"Chaîne intacte : (\d+) entrées vérifiées", text).group(1))  # type: ignore[union-attr]
    listed = tab.page.locator("table.audit tbody tr").count()
    caption = tab.page.inner_text("table.audit caption")
    assert listed == min(verified, 100) and str(listed) in caption and str(verified) in caption  # counts agree
    assert re.search(r"^\d{1,2}(er)? \w+ 20\d\d à \d\d:\d\d:\d\d$",
                     tab.page.inner_text("table.audit tbody tr td time >> nth=0"))
    assert "Date (Europe/Paris)" in tab.page.inner_text("table.audit thead")
    tab.check("audit")


def test_english_is_available(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.go("/console/lang/en")
    tab.login(_keys(site)["agent"])
    tab.open_member(MEMBER)
    assert tab.page.locator("html").get_attribute("lang") == "en"
    assert "Member view" in tab.text() and "Superseded by" in tab.text()
    tab.check("member-en")


def test_a_supervisor_approves_a_proposed_procedure_and_the_next_assemble_has_it(
        tab: Tab, browser: Any, site: tuple[str, dict[str, str]]) -> None:
    agent = Tab(browser, tab.base, _axe_source())
    try:
        agent.login(_keys(site)["agent"])
        agent.go("/console/procedures")
        assert WATER_PROCEDURE not in agent.text()  # proposed: an agent does not see it
        agent.open_member(MEMBER)
        agent.page.fill("#assemble-q", "dégât des eaux")
        agent.submit("form[action$='/member/assemble'] button")
        assert WATER_PROCEDURE not in agent.text()  # never used before approval

        tab.login(_keys(site)["supervisor"])
        assert tab.page.url.endswith("/console/procedures")  # a supervisor's landing page
        proposed = tab.page.locator("#proc-proposed tbody tr", has_text=WATER_PROCEDURE)
        assert proposed.count() == 1
        names = [h.strip() for h in tab.page.locator("main h2, main caption").all_inner_texts()]
        assert len(names) == len(set(names)), names  # no table named twice by its heading and its caption
        assert "superviseur" in tab.page.inner_text("header")
        tab.check("procedures-supervisor")
        with tab.page.expect_navigation(wait_until="load"):
            proposed.locator("form[action$='/approve'] button").click()
        assert "Procédure approuvée" in tab.text()
        assert tab.page.locator("#proc-approved tbody tr", has_text=WATER_PROCEDURE).count() == 1
        assert tab.page.locator("#proc-proposed tbody tr", has_text=WATER_PROCEDURE).count() == 0

        agent.page.fill("#assemble-q", "dégât des eaux")
        agent.submit("form[action$='/member/assemble'] button")
        team = agent.page.locator("ul.team li", has_text=WATER_PROCEDURE)
        assert team.count() == 1
        assert "Procédures de l'équipe (validées par un superviseur)" in (agent.page.text_content("pre") or "")
        agent.go("/console/procedures")
        assert WATER_PROCEDURE in agent.text() and agent.page.locator("form[action$='/retire']").count() == 0
        agent.check("procedures-agent")
    finally:
        agent.close()


def test_back_after_a_search_shows_the_page_before_and_no_url_names_the_member(
        tab: Tab, browser: Any, site: tuple[str, dict[str, str]]) -> None:
    """Every form answers 303 to a GET page whose URL holds an opaque token of the session (screens.py):
    Back and Reload re-ask the server for a GET page, never re-post a form (no ERR_CACHE_MISS)."""
    tab.login(_keys(site)["agent"])
    tab.open_member(MEMBER)
    timeline_url = tab.page.url
    assert re.search(r"/console/member\?view=[\w-]{20,}$", timeline_url)
    tab.page.fill("#search-q", "où habite le membre")
    tab.submit("form[action$='/member/search'] button")
    search_url = tab.page.url
    assert search_url != timeline_url and "Résultats de recherche" in tab.text()
    back = tab.page.go_back(wait_until="load")
    assert back is not None and back.status == 200 and back.request.method == "GET"
    assert tab.page.url == timeline_url and "Chronologie" in tab.text() and "Lyon 7e" in tab.text()
    assert "Résultats de recherche" not in tab.text()
    ahead = tab.page.go_forward(wait_until="load")
    assert ahead is not None and ahead.status == 200 and "Villeurbanne" in tab.page.inner_text("table.ranked")
    again = tab.page.reload(wait_until="load")  # Reload: the same screen, asked again, nothing re-posted
    assert again is not None and again.status == 200 and again.request.method == "GET"
    assert "Résultats de recherche" in tab.text()
    back = tab.page.go_back(wait_until="load")
    assert back is not None and back.status == 200 and tab.page.url == timeline_url
    tab.go("/console/member")
    tab.page.fill("#subject_id", "ADH-0000")  # a mistyped id: the page it leads to is a GET (404) too
    missing = tab.submit("form.find button[type=submit]")
    assert missing.status == 404 and missing.request.method == "GET" and "Aucun membre" in tab.text()
    tab.go("/console/procedures")
    back = tab.page.go_back(wait_until="load")
    assert back is not None and back.status == 404 and "Aucun membre" in tab.text()
    assert not any(MEMBER in u or "habite" in u or "ADH-0000" in u for u in tab.urls), tab.urls
    # A token means something only in the session that made it: another session finds nothing there.
    other = Tab(browser, tab.base, _axe_source())
    try:
        other.login(_keys(site)["agent"])
        other.go(search_url.removeprefix(tab.base))
        assert "Villeurbanne" not in other.text() and "plus disponible" in other.text()
        other.check("member-screen-gone")
    finally:
        other.close()


def test_dates_are_french_and_state_their_zone(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    tab.login(_keys(site)["agent"])
    tab.open_member(MEMBER)
    old = tab.page.locator("li.status-superseded", has_text="Lyon 7e").inner_text()
    # 09:00 UTC on 1 March 2024 (winter time) and on 15 September 2026 (summer time), shown in Europe/Paris.
    assert ("Valide depuis le 1er mars 2024 à 10:00 jusqu'au 15 septembre 2026 à 11:00 (Europe/Paris)"
            in " ".join(old.split())), old
    assert not re.search(r"\d{4}-\d\d-\d\d", tab.text())  # no ISO date left on the page
    tab.go("/console/lang/en")
    tab.open_member(MEMBER)
    old = tab.page.locator("li.status-superseded", has_text="Lyon 7e").inner_text()
    assert "Valid from 1 March 2024 at 10:00 to 15 September 2026 at 11:00 (Europe/Paris)" in " ".join(old.split())
    tab.go("/console/lang/fr")


def test_ids_and_signals_wait_behind_details_and_read_as_words(tab: Tab, site: tuple[str, dict[str, str]]) -> None:
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    tab.login(_keys(site)["agent"])
    tab.open_member(MEMBER)
    card = tab.page.locator("li.status-active", has_text="Villeurbanne")
    assert "préférence" in tab.page.locator("li.memory", has_text="email le matin").locator(".badges").inner_text()
    assert not uuid.search(card.inner_text())  # the id waits behind "détails"
    card.locator("details.more summary").click()
    opened = card.locator("details.more").inner_text()
    assert uuid.search(opened) and "Importance" in opened and "Enregistré le" in opened
    tab.page.fill("#search-q", "où habite le membre")
    tab.submit("form[action$='/member/search'] button")
    table = tab.page.locator("table.ranked")
    shown = table.inner_text()
    assert "Cosinus" not in shown and not re.search(r"-?\d+[.,]\d+", shown) and not uuid.search(shown)
    first = table.locator("tbody tr").first
    assert first.locator("td").nth(2).inner_text() in ("forte", "moyenne", "faible")
    assert "surtout sa pertinence" in first.inner_text()
    first.locator("details summary").click()
    signals = first.locator("details").inner_text()
    assert "Pertinence" in signals and "Correspondance des mots" in signals and uuid.search(signals)
    assert not re.search(r"-?\d+[.,]\d+", signals.split("Identifiant")[0])  # levels, never a number
    tab.check("member-search-details")
    tab.page.fill("#assemble-q", "dégât des eaux")
    tab.submit("form[action$='/member/assemble'] button")
    headings = [h.strip() for h in tab.page.locator("main h2, main h3, main caption").all_inner_texts()]
    doubled = [a for a, b in itertools.pairwise(headings) if a == b]
    assert not doubled, headings
    assert "Aucun." not in tab.text()
