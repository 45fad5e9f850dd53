"""English."""

from __future__ import annotations

import functools
import json

from engine.lexicon import Lexicon, RelationWords

_PERSON_MARKS = frozenset({"people", "person", "persons", "contacts", "contact"})

@functools.cache
def _vocabulary() -> dict[str, int]:
    """The whole words of all-MiniLM-L6-v2's WordPiece vocabulary (30k, uncased English),
    each with its rank: the vocabulary lists words commonest first."""
    from models import load_spec

    try:
        data = json.loads(load_spec().tokenizer_path.read_text(encoding="utf-8"))
        vocab = data["model"]["vocab"]
        ids = sorted((int(i), str(word)) for word, i in vocab.items() if word.isalpha() and not word.startswith("##"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    return {word: rank for rank, (_id, word) in enumerate(ids)}


# fmt: off
ENGLISH = Lexicon(
    language="en",
    stop_words=frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "although", "am", "an",
    "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
    "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down",
    "during", "each", "either", "else", "even", "ever", "every", "few", "for", "from",
    "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
    "how", "however", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let",
    "like", "may", "me", "meanwhile", "might", "more", "most", "much", "must", "my",
    "neither", "no", "nor", "not", "now", "of", "off", "often", "on", "once", "one", "only",
    "or", "other", "our", "ours", "out", "over", "own", "per", "perhaps", "please", "same",
    "she", "should", "since", "so", "some", "still", "such", "than", "thank", "thanks",
    "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this",
    "those", "though", "through", "thus", "to", "today", "tomorrow", "too", "under", "until",
    "up", "upon", "us", "very", "via", "was", "we", "well", "were", "what", "when", "where",
    "whether", "which", "while", "who", "whom", "whose", "why", "will", "with", "within",
    "without", "would", "yes", "yesterday", "yet", "you", "your", "yours", "hi", "hello",
    "dear", "ok", "okay", "note", "see", "later", "earlier", "first", "next", "finally",
    "last", "recently", "currently", "maybe", "sometimes", "usually", "actually", "anyway",
    "instead", "overall", "otherwise", "therefore", "again", "soon", "then",
)),
    name_connectors=frozenset({"of", "de", "van", "von", "la"}),
    who_words=frozenset({"who", "whom", "whose"}),
    question_words=frozenset({
        "who", "whom", "whose", "what", "which", "where", "when", "why", "how",
        "is", "are", "was", "were", "did", "does", "do", "can", "could", "has", "have", "had",
    }),
    person_words=frozenset({"someone", "somebody", "anyone", "anybody", *_PERSON_MARKS}),
    person_nouns=frozenset(
        noun + ending
        for noun in (
            # Not "manager", "editor" or "writer": a password manager, a text editor and a
            # file writer are tools, and a query names them as often as people.
            "engineer", "developer", "programmer", "designer", "leader", "director", "executive",
            "scientist", "researcher", "analyst", "consultant", "lawyer", "doctor", "teacher",
            "professor", "author", "artist", "journalist", "recruiter", "mentor", "expert",
            "colleague", "friend",
        )
        for ending in ("", "s")
    ),
    clause_openers=frozenset({"and", "but", "so", "or", "then"}),
    # Not "that" (a determiner as often: "that protocol") nor "when" (a time, as often).
    relative_words=frozenset({"where", "which", "who", "whom", "whose"}),
    gap_words=frozenset({"what"}),
    person_marks=_PERSON_MARKS,
    organisation_marks=frozenset(
        {"companies", "company", "organizations", "organization", "organisations", "organisation"}
        | {"orgs", "firms", "startups"}
    ),
    any_note_folders=frozenset(
        {"note", "notes", "file", "files", "doc", "docs", "document", "documents", "misc", "stuff"}
    ),
    resemblance=r"similar|resembl\w*|comparable|alike|akin|like",
    time_words={
        "today": ("day", 0),
        "yesterday": ("day", -1),
        "this week": ("week", 0),
        "last week": ("week", -1),
        "this month": ("month", 0),
        "last month": ("month", -1),
        "this year": ("year", 0),
        "last year": ("year", -1),
    },
    months=(
        "january", "february", "march", "april", "may", "june",
        "july", "august", "september", "october", "november", "december",
    ),
    month_preposition="in",
    known_words=_vocabulary,
    description_properties=("description", "summary", "about", "role", "bio"),
    head_last=True,
    passive_marks=frozenset({"by"}),
    clause_marks=frozenset({"which", "who", "whom", "whose", "that", "where", "when", "he", "she", "they", "we", "i"}),
    relations=(
        RelationWords(
            "attended",
            active=("attended", "attends", "attending", "attend", "was present at"),
            passive=("attended by",),
            subject_roles=("attendees", "attendee", "participants", "attendance"),
            object_properties=("meetings", "meeting", "events", "event"),
            subject_properties=("participants",),
        ),
        RelationWords(
            "works at",
            active=(
                "works at", "worked at", "working at", "works for", "worked for", "working for",
                "employed at", "employed by", "engineer at", "role at", "team at", "joined",
                "ceo of", "cto of", "coo of", "cfo of",
            ),
            passive=("employs",),
            subject_roles=("employees", "staff"),
            object_properties=("company", "employer", "organisation", "organization", "org"),
            subject_properties=("team", "people"),
        ),
        RelationWords(
            "founded",
            active=("founded", "co-founded", "cofounded", "founder of", "co-founder of", "cofounder of"),
            passive=("founded by", "co-founded by", "cofounded by"),
            subject_roles=("founders", "co-founders", "cofounders"),
            subject_properties=("founder", "co-founder", "cofounder"),
            implies=("works at",),
        ),
        RelationWords(
            "invested in",
            active=(
                "invested in", "invests in", "investing in", "investment in", "investments in",
                "invested into", "investment into", "investor in", "investor at", "backer of", "backed",
                # Leading or joining a funding round ("[[Kate]] led their seed round").
                "led * round", "leads * round", "leading * round", "co-led * round",
                "led * round for", "led * round in", "led series * for", "led series * in",
                "joined * round", "joins * round", "participated in * round", "participates in * round",
            ),
            passive=(
                "backed by", "funded by", "invested by",
                # The round of the note written in ("raised a seed round led by [[Fiona]]").
                "round led by", "round co-led by", "round from", "participation from",
                "investment from", "funding from", "backing from",
            ),
            subject_roles=(
                "investors", "backers", "investors include", "investors included", "backers include",
                # "Its investor base includes [[A]]", "investor syndicate includes [[B]]".
                "investor * includes", "investor * included",
            ),
            subject_properties=("investor",),
            object_properties=("investments", "portfolio"),
        ),
        RelationWords(
            "advises",
            active=(
                "advises", "advised", "advising", "advisor to", "adviser to", "advisor at",
                "advisor for", "advisory role at", "as an advisor", "as an adviser", "as advisor",
            ),
            passive=("advised by",),
            subject_roles=("advisors", "advisers"),
            subject_properties=("advisor", "adviser"),
        ),
        RelationWords(
            "reports to",
            active=("reports to", "reported to", "reporting to", "reports into", "managed by"),
            passive=("manages",),
            subject_roles=("direct reports",),
            object_properties=("manager", "boss"),
        ),
        RelationWords(
            "part of",
            active=("part of", "belongs to", "member of", "subsidiary of", "division of"),
            passive=("includes", "consists of"),
            subject_roles=("members",),
            object_roles=("parent",),
            object_properties=("project", "area", "up"),
        ),
    ),
)
# fmt: on
