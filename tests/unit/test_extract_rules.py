"""The rule-based extractor: what it drops, what it keeps and how it words it, categories, dates,
the episode, English. Pure: no store, no model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from carnet.adapters.extractors.rules import RuleExtractor
from carnet.domain.extraction.model import Extraction
from carnet.domain.extraction.rules import CATEGORIES, extract
from carnet.domain.extraction.rules.rewrite_fr import ADVISOR, MEMBER, rewrite_fr
from carnet.domain.extraction.rules.verbs import third_singular
from carnet.domain.intake import Message
from carnet.domain.records import Kind
from carnet.ports import Extractor

AT = datetime(2024, 3, 12, 9, 30, tzinfo=UTC)


def _call(*turns: tuple[str, str], session: str | None = "call-1", locale: str = "fr") -> Extraction:
    messages = [Message(role, text, AT + timedelta(minutes=n)) for n, (role, text) in enumerate(turns)]
    return extract(messages, session_id=session, locale=locale)


def _texts(extraction: Extraction) -> list[str]:
    return [f.text for f in extraction.facts]


def _one(role: str, text: str) -> str:
    facts = _texts(_call((role, text), session=None))
    assert len(facts) == 1, facts
    return facts[0]


# --- what is not worth remembering ---------------------------------------------------------------


def test_small_talk_gives_nothing() -> None:
    found = _call(
        ("advisor", "Mutuelle Horizon bonjour, <PERSON_1> à l'appareil, que puis-je faire pour vous ?"),
        ("user", "Bonjour madame."),
        ("advisor", "Je vous écoute. Un petit instant, je vous mets en attente."),
        ("user", "D'accord, merci."),
        ("advisor", "Merci de votre patience, je regarde votre dossier. C'est noté."),
        ("user", "Très bien, parfait, merci beaucoup. Au revoir !"),
        ("advisor", "Je vous en prie, bonne journée madame <PERSON_2>."),
        ("system", "Tu es l'assistant du conseiller. Le contrat CTR-000001 est confidentiel."),
    )
    assert found.facts == () and found.episode is None


def test_the_advisor_confirming_a_replacement_adds_no_fact_beside_the_new_value() -> None:
    """"je remplace votre ancien numéro" names nothing new: as a fact of its own, reconcile closed the member's new
    number with it; "je remplace la Peugeot par la Skoda" names what comes instead and is kept."""
    found = _call(("user", "J'ai changé de numéro : le nouveau c'est le <PHONE_1>."),
                  ("advisor", "C'est noté, je remplace votre ancien numéro."),
                  ("advisor", "Et je remplace la Peugeot par la Skoda sur votre contrat."))
    assert _texts(found) == ["Le membre a changé de numéro : le nouveau c'est le <PHONE_1>.",
                             "Le conseiller remplace la Peugeot par la Skoda sur le contrat du membre."]


def test_ritual_clauses_go_and_the_rest_stays() -> None:
    text = _one("advisor", "Je suis désolée pour ce désagrément, je transmets votre réclamation au service qualité.")
    assert text == "Le conseiller transmet la réclamation du membre au service qualité."


def test_questions_are_no_facts_but_requests_are() -> None:
    assert _call(("user", "Vous pouvez me dire où en est mon dossier ?"), session=None).facts == ()
    text = _one("user", "Est-ce que je peux décaler la première échéance de mon prêt auto ?")
    assert text == "Demande du membre : décaler la première échéance de son prêt auto."
    assert _one("user", "Est-ce que vous pourriez tout envoyer par courrier ?") == (
        "Demande du membre : tout envoyer par courrier.")  # "tout" is no "to" to strip
    assert _one("user", "C'est possible de tout avoir par mail ?") == "Demande du membre : tout avoir par mail."


# --- rewriting --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("J'ai déménagé à Lyon.", "Le membre a déménagé à Lyon."),
        ("Mon numéro de contrat est CTR-123456", "Le numéro de contrat du membre est CTR-123456."),
        ("Je vous appelle parce que j'ai un dégât des eaux dans ma cuisine.",
         "Le membre a un dégât des eaux dans sa cuisine."),
        ("Je me suis installée à Villeurbanne et j'habite maintenant au <ADDRESS_1>.",
         "Le membre s'est installée à Villeurbanne et il habite maintenant au <ADDRESS_1>."),
        ("Je ne suis plus salarié chez Renault.", "Le membre n'est plus salarié chez Renault."),
        ("Ma femme et moi avons acheté une maison à Roubaix.",
         "Le membre et sa femme ont acheté une maison à Roubaix."),
        ("Mon mari et moi on se sépare.", "Le membre et son mari se séparent."),  # the pair resumed by "on"
        ("Ma femme et moi, on s'est mariés en juin.", "Le membre et sa femme se sont mariés en juin."),
        ("Mon mari et moi, nous nous en occupons.", "Le membre et son mari s'en occupent."),
        ("Mon fils et moi on habitait à Lyon.", "Le membre et son fils habitaient à Lyon."),
        ("Nous avons eu un bébé en janvier.", "Le foyer du membre a eu un bébé en janvier."),
        ("Vous m'avez prélevé deux fois ce mois-ci.", "Le conseiller a prélevé le membre deux fois ce mois-ci."),
        ("Un expert doit me rappeler demain.", "Un expert doit rappeler le membre demain."),
        ("Rappelez-moi plutôt l'après-midi.", "Le membre demande à être rappelé plutôt l'après-midi."),
        ("Un monsieur m'a téléphoné la semaine dernière.", "Un monsieur a téléphoné au membre la semaine dernière."),
        ("J'appelle pour un de vos sociétaires.", "Le membre appelle pour un des sociétaires."),
        ("Les mails de vos partenaires, j'en peux plus.", "Les mails des partenaires, le membre n'en peut plus."),
        ("Je parle de votre service client.", "Le membre parle du service client."),
        ("Ma fille continue à s'occuper de tout.", "Sa fille continue à s'occuper de tout."),
        ("Je ne voulais pas me retrouver sans rien.", "Le membre ne voulait pas se retrouver sans rien."),
        ("Je lui ai demandé de me rappeler.", "Le membre lui a demandé de rappeler le membre."),
        ("J'ai eu un appel, il voulait me prévenir.", "Le membre a eu un appel, il voulait prévenir le membre."),
        ("Je suis pas chez moi, je loge chez ma sœur.", "Le membre n'est pas chez lui, il loge chez sa sœur."),
        ("On est rentrés samedi.", "Le foyer du membre est rentré samedi."),  # singular with a singular subject
        ("Vous pouvez de nouveau écrire sur la mienne.", "Le conseiller peut de nouveau écrire sur la sienne."),
    ],
)
def test_member_statements_in_the_third_person(said: str, fact: str) -> None:
    assert rewrite_fr(said, MEMBER) == fact


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("Je vous envoie un devis par email.", "Le conseiller envoie au membre un devis par email."),
        ("Nous avons procédé au remboursement de 320 euros.", "Le conseiller a procédé au remboursement de 320 euros."),
        ("Je vois que vous avez un contrat MRH chez nous depuis 2019.", "Le membre a un contrat MRH depuis 2019."),
        ("Je vous rappelle demain matin.", "Le conseiller rappelle le membre demain matin."),
        ("Un expert vous contactera sous 48 heures.", "Un expert contactera le membre sous 48 heures."),
        ("Vous recevrez un courrier de confirmation.", "Le membre recevra un courrier de confirmation."),
        ("Je mets à jour votre adresse.", "Le conseiller met à jour l'adresse du membre."),
        ("Je vous confirme que votre résiliation prendra effet le 1er juillet.",
         "La résiliation du membre prendra effet le 1er juillet."),
        ("Envoyez-nous les photos de la cuisine.",
         "Le conseiller demande au membre d'envoyer les photos de la cuisine."),
        ("Formule Famille pour vous trois, à 96 euros.", "Formule Famille pour les trois, à 96 euros."),
        # verbs whose object is indirect: the member comes back as "au membre"
        ("On vous parlera lentement.", "Le conseiller parlera au membre lentement."),
        ("Je vous ouvre un dossier.", "Le conseiller ouvre au membre un dossier."),
        ("Je vous épelle la référence.", "Le conseiller épelle au membre la référence."),
        # a spelled-out possessive after "à" or "de" contracts
        ("Je peux envoyer la documentation à votre fils.",
         "Le conseiller peut envoyer la documentation au fils du membre."),
        ("Je vous envoie le devis de vos enfants.", "Le conseiller envoie au membre le devis des enfants du membre."),
        ("Je vous appelle au sujet de votre maman.", "Le conseiller appelle le membre au sujet de la maman du membre."),
        ("Un de nos conseillers vous rappellera.", "Un des conseillers rappellera le membre."),
        ("Je vous réexplique la garantie.", "Le conseiller réexplique au membre la garantie."),
        # the owner goes after the noun's complement
        ("Je résilie votre contrat auto.", "Le conseiller résilie le contrat auto du membre."),
        ("Je le dépose dans votre espace client.", "Le conseiller le dépose dans l'espace client du membre."),
        ("Je vous dirai ce qui reste à payer.", "Le conseiller dira au membre ce qui reste à payer."),
        ("Votre numéro à vous reste le <PHONE_1> ?", "Le numéro du membre reste le <PHONE_1> ?"),
        ("Je le note comme votre numéro à vous.", "Le conseiller le note comme le numéro du membre."),
        ("Votre dossier complet à nous renvoyer avant le 12.",
         "Son dossier complet à renvoyer à l'établissement avant le 12."),
        ("Nous n'avons pas le droit de vous le demander.", "Le conseiller n'a pas le droit de le demander au membre."),
        ("C'est à vous de voir.", "C'est au membre de voir."),
        ("Il suffira de nous envoyer l'attestation.", "Il suffira d'envoyer à l'établissement l'attestation."),
        ("Il suffit de nous rappeler demain.", "Il suffit de rappeler l'établissement demain."),
        ("Je vais m'en occuper.", "Le conseiller va s'en occuper."),
        ("Un geste commercial vous a été accordé.", "Un geste commercial a été accordé au membre."),
        ("Transférez-le à l'adresse de gestion.", "Transférez-le à l'adresse de gestion."),  # no elision after a hyphen
        ("La loi vous permet de changer d'assurance.", "La loi permet au membre de changer d'assurance."),
        ("C'est une carte par contrat, la vôtre.", "C'est une carte par contrat, la sienne."),
        ("Votre part salariale descend à 44,70 € par mois.", "Sa part salariale descend à 44,70 € par mois."),
        # a cardinal stands before the noun, an adjective by its ending after it: the owner after both
        ("Je vois vos deux comptes.", "Le conseiller voit les deux comptes du membre."),
        ("Je clôture votre entreprise individuelle.", "Le conseiller clôture l'entreprise individuelle du membre."),
        ("Je transmets votre dossier médical.", "Le conseiller transmet le dossier médical du membre."),
        ("Je vous envoie un formulaire à nous retourner.",
         "Le conseiller envoie au membre un formulaire à retourner à l'établissement."),
    ],
)
def test_advisor_statements_name_both_sides(said: str, fact: str) -> None:
    assert rewrite_fr(said, ADVISOR) == fact


@pytest.mark.parametrize(
    ("form", "person", "third"),
    [("suis", "1s", "est"), ("voudrais", "1s", "voudrait"), ("transmets", "1s", "transmet"), ("serai", "1s", "sera"),
     ("avez", "2p", "a"), ("recevrez", "2p", "recevra"), ("appelez", "2p", "appelle"), ("préférez", "2p", "préfère"),
     ("déclarez", "2p", "déclare"), ("vérifiez", "2p", "vérifie"), ("aviez", "2p", "avait"), ("vendez", "2p", "vend"),
     ("avons", "1p", "a"), ("déménageons", "1p", "déménage"), ("enverrons", "1p", "enverra"),
     ("changiez", "2p", "changeait"), ("commencions", "1p", "commençait"), ("mangions", "1p", "mangeait"),
     ("sentez", "2p", "sent"), ("dormons", "1p", "dort"), ("portez", "2p", "porte")],
)
def test_verbs_change_person(form: str, person: str, third: str) -> None:
    assert third_singular(form, person) == third


def test_an_answer_is_read_with_its_question() -> None:
    found = _call(
        ("advisor", "Pouvez-vous me donner votre numéro de contrat ?"), ("user", "Oui, c'est le CTR-123456."),
        ("advisor", "Vous habitez toujours à Lyon ?"), ("user", "Oui."),
        ("advisor", "Vous préférez être contacté comment ?"), ("user", "Par email, je ne réponds jamais avant 14h."),
        ("advisor", "Souhaitez-vous toujours être prélevé le 5 du mois ?"), ("user", "Non, je préfère le 10."),
    )
    assert _texts(found)[:3] == [
        "Le numéro de contrat du membre est CTR-123456.",
        "Le membre habite toujours à Lyon.",
        "Le membre préfère être contacté par email ; le membre ne répond jamais avant 14h.",  # one turn
    ]
    assert _texts(found)[3] == ("Le membre préfère le 10 (en réponse à « Souhaitez-vous toujours être prélevé "
                                "le 5 du mois ? »).")  # a "non" never turns the question into a fact


def test_an_answer_with_a_verb_of_its_own_is_not_put_in_the_question() -> None:
    found = _call(("advisor", "Vous êtes en arrêt jusqu'à quand ?"), ("user", "L'arrêt va jusqu'au 28 mars."),
                  ("advisor", "Vous habitez où ?"), ("user", "À Valence."))
    assert _texts(found)[0].startswith("L'arrêt va jusqu'au 28 mars 2024")  # not "…jusqu'à l'arrêt va…"
    assert _texts(found)[1] == "Le membre habite à Valence."


def test_an_elliptic_question_is_asked_about_the_sentence_before_it() -> None:
    found = _call(("advisor", "Très bien, un prélèvement mensuel sur votre compte courant. De combien ?"),
                  ("user", "80 euros."))
    assert "prélèvement mensuel" in _texts(found)[-1] and "80 euros" in _texts(found)[-1]  # one fact
    alone = _call(("advisor", "Félicitations ! Où ça ?"), ("user", "Un appartement à Valence."))  # nothing to be about
    assert _texts(alone) == ["Un appartement à Valence (en réponse à « Où ça ? »)."]


def test_the_advisors_short_answer_keeps_the_members_question() -> None:
    found = _call(("user", "Elle coûte combien, la formule Équilibre ?"), ("advisor", "131,80 euros par mois."))
    assert _texts(found) == ["131,80 euros par mois (en réponse à « Elle coûte combien, la formule Équilibre ? »)."]
    # Not a question asked out loud, and an answer of its own: read alone.
    said = _call(("user", "Quand j'ai les mains prises, je ne peux pas décrocher."), ("advisor", "Par SMS, alors."))
    assert not any("en réponse" in t for t in _texts(said))
    long = _call(("user", "C'est possible ?"),
                 ("advisor", "Le conseiller vous ouvre un livret A avec un virement automatique de 20 euros le 5."))
    assert not any("en réponse" in t for t in _texts(long))


def test_a_member_who_asks_to_wait_still_answers_the_question() -> None:
    found = _call(("advisor", "Vous avez un numéro de dossier ?"), ("user", "Oui, attendez... 057-2025-00841."))
    assert _texts(found) == ["057-2025-00841 (en réponse à « Vous avez un numéro de dossier ? »)."]
    address = _call(("advisor", "Quelle est votre adresse ?"), ("user", "Un instant, je regarde. 4 rue des Lilas."))
    assert not any("regarde" in t or "instant" in t for t in _texts(address))  # never the answer's value
    confirmed = _call(("advisor", "Vous avez un numéro de dossier ?"), ("user", "Oui. Et mon fils vit à Lyon."))
    assert not any("en réponse" in t for t in _texts(confirmed))  # a plain "oui" answered it


def test_relayed_notes_and_greetings() -> None:
    greeted = _call(
        ("advisor", "Mutuelle <PERSON_9>, bonjour."),  # the company's name next to a greeting: no fact
        ("user", "Bonjour madame, <PERSON_1>. J'ai une question sur mon contrat auto."),
        session=None,
    )
    assert _texts(greeted) == ["Le membre a une question sur son contrat auto."]  # the greeting is no record
    notes = _call(  # no advisor speaks: "user" messages may be the advisor's notes about the member
        ("user", "On lui a envoyé l'attestation le 3 mars."),  # the advisor relaying: "on" is the company
        ("user", "M. <PERSON_1>, artisan plombier, a un compte professionnel chez nous."),
        ("user", "Il y a un retard de paiement, on l'a relancé."),  # an impersonal "il" names nobody
        session=None,
    )
    assert _texts(notes) == [
        "Le conseiller lui a envoyé l'attestation le 3 mars 2024.",
        "M. <PERSON_1>, artisan plombier, a un compte professionnel.",
        "Il y a un retard de paiement, le foyer du membre l'a relancé.",
    ]


def test_a_caller_speaking_of_the_member_is_not_the_advisor() -> None:
    """In a dialogue the member's side is the caller: a relative's "on" is their household and
    "vous" the company, though they speak of the member in the third person."""
    found = _call(
        ("advisor", "Mutuelle du Rhône, bonjour, que puis-je pour vous ?"),
        ("user", "Il a un nouveau numéro, il faut le changer partout."),
        ("user", "On a reçu un courrier mais il n'est pas très clair."),
        ("user", "Il voudrait que vous le rappeliez demain."),
        session=None,
    )
    texts = _texts(found)
    assert not any("conseiller a reçu" in t for t in texts), texts
    assert any(t.startswith("Le foyer du membre a reçu un courrier") for t in texts), texts
    assert any("que le conseiller le rappel" in t for t in texts), texts  # "vous": the company


def test_placeholders_are_kept_verbatim() -> None:
    found = _call(
        ("user", "Je m'appelle <PERSON_1>, mon IBAN est <IBAN_1> et mon email <EMAIL_1>."),
        ("user", "J'ai déménagé au <ADDRESS_1>, mon portable c'est le <PHONE_1>."),
    )
    joined = " ".join(_texts(found))
    for placeholder in ("<PERSON_1>", "<IBAN_1>", "<EMAIL_1>", "<ADDRESS_1>", "<PHONE_1>"):
        assert joined.count(placeholder) == 1


# --- fact families, categories, importance --------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "said", "category", "importance"),
    [
        ("user", "J'ai une assurance habitation MRH formule Confort depuis 2019.", "contrat", 0.7),
        ("user", "J'ai un dégât des eaux dans la salle de bain, le dossier c'est SIN-2024-0815.", "sinistre", 0.8),
        ("user", "J'ai déménagé à Villeurbanne le mois dernier.", "adresse", 0.6),
        ("user", "Je préfère être contacté par email plutôt que par téléphone.", "preference", 0.8),
        ("user", "Mon numéro de portable a changé, c'est le <PHONE_1>.", "contact", 0.55),
        ("user", "Je me suis mariée en juin et nous attendons un bébé.", "famille", 0.55),
        ("user", "Le prélèvement de mars a été rejeté, je n'avais pas assez sur mon compte.", "paiement", 0.7),
        ("user", "Je conteste le refus de remboursement, ce n'est pas normal.", "reclamation", 0.75),
        ("user", "Nous voulons financer l'achat d'une maison avec un apport de 40 000 euros.", "projet", 0.5),
        ("advisor", "Un expert passera chez vous le 15 mars entre 9h et 12h.", "decision", 0.8),
        ("advisor", "Nous avons procédé au remboursement de 320 euros.", "decision", 0.8),
        # the advisor's verbs of changing what the file holds are decisions, with or without a keyword
        ("advisor", "Je remplace la Peugeot par la Skoda.", "decision", 0.8),
        ("advisor", "Je change la Clio pour la 308.", "decision", 0.8),
        ("user", "Mon chat s'appelle Caramel et il adore les croquettes.", "autre", 0.3),
        # consent to marketing is how the member may be approached, whoever says it
        ("user", "Plus d'appels commerciaux pour moi.", "preference", 0.8),
        ("advisor", "Je note qu'on ne vous fait plus aucune proposition commerciale.", "preference", 0.8),
        ("advisor", "Je retire votre accord pour les offres des partenaires.", "preference", 0.8),
        # "opposition" is the card's when a payment object goes with it, else the member's to solicitation
        ("advisor", "Je vais mettre la carte en opposition.", "paiement", 0.7),
        ("user", "J'ai fait opposition sur mon chéquier hier.", "paiement", 0.7),
        ("advisor", "Très bien, je note votre opposition.", "preference", 0.55),  # no object: not a profile fact
        ("advisor", "C'est noté : opposition au démarchage téléphonique.", "preference", 0.8),
        # a payment announced as gone is an outcome, whoever says it
        ("advisor", "Le premier versement d'indemnités est parti hier : 1 800 euros.", "decision", 0.8),
        ("user", "Le virement de la Sécu n'est pas encore arrivé.", "paiement", 0.7),
        # a profile fact (how to treat the person) is worth a decision, whatever its category
        ("user", "Je suis malentendante, il faut me parler lentement.", "autre", 0.8),
    ],
)
def test_each_family_is_kept_and_filed(role: str, said: str, category: str, importance: float) -> None:
    [fact] = _call((role, said), session=None).facts
    assert (fact.category, fact.importance, fact.kind) == (category, importance, Kind.FACT)
    assert category in CATEGORIES


# --- dates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "day"),
    [
        ("J'ai déménagé le 3 mars.", datetime(2024, 3, 3, tzinfo=UTC)),
        ("Je suis en arrêt maladie depuis le 12/02/2024.", datetime(2024, 2, 12, tzinfo=UTC)),
        ("Le dégât des eaux date d'hier.", datetime(2024, 3, 11, tzinfo=UTC)),
        ("J'ai une assurance auto depuis le 3 décembre.", datetime(2023, 12, 3, tzinfo=UTC)),
        ("L'expert passera le 15 mars.", AT),  # a plan: the commitment is from the call
        ("Je suis client depuis le 1er mars 2001.", AT),  # years back would start its retention then
    ],
)
def test_valid_from_is_the_call_or_an_explicit_earlier_date(said: str, day: datetime) -> None:
    [fact] = _call(("user", said), session=None).facts
    assert fact.valid_from == day


def test_without_a_time_nothing_is_dated() -> None:
    found = extract([Message("user", "J'ai déménagé hier à Lyon.")], session_id=None, locale="fr")
    assert [f.valid_from for f in found.facts] == [None]


# --- episode -------------------------------------------------------------------------------------

CALL = (
    ("advisor", "Mutuelle Horizon bonjour, que puis-je pour vous ?"),
    ("user", "Bonjour, je voudrais déclarer un dégât des eaux dans ma cuisine."),
    ("advisor", "J'ouvre un dossier, le numéro est SIN-2024-0815. Un expert passera le 15 mars."),
    ("user", "Merci. Au fait, j'ai déménagé à Villeurbanne."),
    ("advisor", "C'est noté, bonne journée."),
)


def test_a_call_has_a_short_episode() -> None:
    found = _call(*CALL)
    assert found.episode == ("Appel du 12 mars 2024 : déclaration d'un dégât des eaux et changement d'adresse ; "
                             "le conseiller ouvre un dossier, le numéro est SIN-2024-0815 ; "
                             "un expert passera le 15 mars 2024.")


def test_no_episode_without_a_session_or_a_conversation() -> None:
    assert _call(*CALL, session=None).episode is None
    assert _call(("user", "J'ai déménagé à Villeurbanne."), ("user", "Je préfère le courriel.")).episode is None


# --- English --------------------------------------------------------------------------------------


def test_english_basics() -> None:
    found = _call(
        ("agent", "Hello, you're through to Northway Insurance, how can I help?"),
        ("user", "Hi, I moved to Leeds last month and I need to update my address."),
        ("agent", "Sure. What's your new address?"),
        ("user", "It's <ADDRESS_1>."),
        ("agent", "Thanks, I've updated your address and I'll send you a new certificate by email."),
        ("user", "Great, thanks. Also I prefer to be called in the evening."),
        ("agent", "Noted. Have a nice day!"),
        locale="en",
    )
    assert _texts(found) == [
        "The member moved to Leeds last month and the member needs to update their address.",
        "The member's new address is <ADDRESS_1>.",
        "The advisor has updated the member's address and the advisor will send the member a new certificate by "
        "email.",
        "The member prefers to be called in the evening.",
    ]
    assert [f.category for f in found.facts] == ["adresse", "adresse", "decision", "preference"]
    assert found.episode is not None and found.episode.startswith("Call on 12 March 2024: change of address;")


# --- the adapter -----------------------------------------------------------------------------------


def test_the_adapter_implements_the_port() -> None:
    extractor: Extractor = RuleExtractor()
    assert extractor.name == "rules"
    assert extractor.obsolete("Le membre habite à Lyon.", [("m1", "Le membre habite à Paris.")], locale="fr") == []
    found = extractor.extract([Message("user", "J'ai déménagé à Lyon.", AT)], session_id="s", locale="fr")
    assert _texts(found) == ["Le membre a déménagé à Lyon."] and found.tokens_in == found.tokens_out == 0


@pytest.mark.parametrize("content", ["", "   ", "?", "...", "'", "<PERSON_1>", "j'", "je", "vous", "Mon", "-moi",
                                     "a" * 5000, "Je suis là. " * 300, "Vous m' ? nous ! mon , j' ; <IBAN_1> ."])
def test_odd_messages_never_raise(content: str) -> None:
    for locale in ("fr", "en"):
        found = _call(("user", content), ("advisor", content), locale=locale)
        assert all(f.text.strip() for f in found.facts)

