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


_VOWELS = "aeiou"


def _inflect(verb: str) -> tuple[str, ...]:
    """A regular English verb's third person and past forms ("ship" → ships, shipped; "close" →
    closes, closed; "study" → studies, studied). A final consonant after one vowel is doubled
    too ("shipped"), as stress decides and the spelling cannot tell: a doubled form a verb
    does not take is never written, so it costs nothing. Not the -ing form: it opens names
    as often as sentences ("Rolling Stone", "Working Copy", "Reading Festival")."""
    if verb.endswith(("s", "x", "z", "ch", "sh")):
        third = verb + "es"
    elif verb.endswith("y") and verb[-2:-1] not in _VOWELS:
        third = verb[:-1] + "ies"
    else:
        third = verb + "s"
    if verb.endswith("e"):
        past = verb + "d"
    elif verb.endswith("y") and verb[-2:-1] not in _VOWELS:
        past = verb[:-1] + "ied"
    else:
        past = verb + "ed"
    forms = [third, past]
    if len(verb) >= 3 and verb[-1] not in _VOWELS + "wxy" and verb[-2] in _VOWELS and verb[-3] not in _VOWELS:
        forms.append(verb + verb[-1] + "ed")
    return tuple(forms)


# fmt: off
# Verbs notes open sentences and log lines with (records, reports, abstracts, instructions).
# Not those whose base form opens names as often as sentences ("mark", "launch", "lead",
# "sync", "review", "open", "found"): only their inflected forms count, through `_inflect`.
_VERBS = (
    "accelerate", "accept", "achieve", "acquire", "activate", "add", "adopt", "advise", "affect",
    "agree", "aim", "allow", "alter", "analyse", "analyze", "announce", "appear", "appoint",
    "approve", "arrive", "ask", "assess", "assign", "attend", "attenuate", "become", "begin",
    "believe", "bind", "block", "book", "bring", "build", "buy", "call", "cancel", "cause",
    "celebrate", "change", "check", "choose", "close", "collaborate", "combine", "come",
    "compare", "complete", "confirm", "connect", "consider", "contain", "continue", "contribute",
    "convert", "create", "cut", "decide", "decline", "decrease", "deliver", "demonstrate",
    "deploy", "describe", "design", "determine", "develop", "discover", "discuss", "drive",
    "email", "enable", "encode", "end", "enhance", "ensure", "enter", "establish", "evaluate",
    "examine", "exhibit", "expand", "explain", "explore", "express", "extend", "facilitate",
    "fail", "feel", "file", "finish", "fix", "focus", "follow", "forget", "get", "give", "go",
    "grow", "hear", "help", "hire", "hold", "host", "identify", "implement", "improve",
    "include", "incorporate", "increase", "indicate", "induce", "inhibit", "initiate", "introduce", "invest",
    "invite", "involve", "join", "keep", "know", "lack", "launch", "lead", "learn", "leave",
    "like", "link", "list", "make", "manage", "measure", "mediate", "meet", "mention",
    "migrate", "modulate", "move", "need", "negotiate", "observe", "obtain", "offer", "open",
    "organise", "organize", "pay", "perform", "pitch", "plan", "post", "prepare", "present",
    "prevent", "produce", "promote", "propose", "provide", "publish", "push", "raise", "reach",
    "receive", "recommend", "record", "reduce", "refactor", "regulate", "reject", "release",
    "remain", "remove", "rename", "replace", "report", "represent", "require", "resign",
    "resolve", "respond", "restore", "result", "retire", "return", "reveal", "review", "rewrite",
    "rumor", "rumour", "run", "say", "schedule", "secure", "see", "seek", "sell", "send", "serve",
    "set", "ship", "show", "sign", "speak", "spend", "spin", "start", "stay", "stop", "study",
    "submit", "suggest", "support", "suppress", "switch", "take", "talk", "target", "teach",
    "tell", "test", "think", "track", "train", "transfer", "transition", "treat", "try", "turn",
    "understand", "unveil", "update", "upgrade", "use", "verify", "visit", "want", "work",
    "write",
)
# Instructions open with these, as a bare base form ("Install Obsidian CLI", "Tap Export").
_INSTRUCTION_VERBS = (
    "add", "ask", "call", "check", "choose", "click", "configure", "confirm", "copy", "create",
    "close", "customize", "customise", "delete", "disable", "download", "drag", "email", "enable",
    "ensure", "enter", "execute", "extend", "find", "follow", "get", "give", "inspect",
    "insert", "install", "invite", "keep", "navigate", "open", "ping", "press", "quit", "register",
    "relaunch", "reload", "remove", "reopen", "restart", "restore", "run", "select", "send", "tap", "type",
    "uninstall", "upload", "use", "visit",
)
_IRREGULAR_VERBS = {
    "become": ("became",), "begin": ("began", "begun"), "bring": ("brought",),
    "build": ("built",), "buy": ("bought",), "choose": ("chose", "chosen"), "come": ("came",),
    "cut": (), "drive": ("drove", "driven"), "feel": ("felt",), "forget": ("forgot", "forgotten"),
    "get": ("got", "gotten"), "give": ("gave", "given"), "go": ("went",),
    "grow": ("grew", "grown"), "hear": ("heard",), "hold": ("held",), "keep": ("kept",),
    "know": ("knew", "known"), "lead": ("led",), "leave": ("left",),
    "make": ("made",), "meet": ("met",), "pay": ("paid",), "run": ("ran",),
    "say": ("said",), "see": ("saw", "seen"), "seek": ("sought",), "sell": ("sold",),
    "send": ("sent",), "set": (), "show": ("shown",), "speak": ("spoke", "spoken"),
    "spend": ("spent",), "spin": ("spun",), "take": ("took", "taken"), "teach": ("taught",),
    "tell": ("told",), "think": ("thought",), "understand": ("understood",),
    "write": ("wrote", "written"),
}
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
    sentence_openers=frozenset({
        "according", "across", "along", "amid", "among", "amongst", "another", "around", "behind",
        "beside", "besides", "beyond", "concerning", "considering", "despite", "excluding",
        "featuring", "following", "given", "including", "inside", "many", "numerous", "outside",
        "regarding", "several", "starring", "throughout", "toward", "towards", "unless",
        "unlike", "using", "various", "whereas", "whilst", "whatever", "whoever", "based",
    }),
    verbs=_VERBS,
    instruction_verbs=_INSTRUCTION_VERBS,
    irregular_verbs=_IRREGULAR_VERBS,
    inflect=_inflect,
    adverb_endings=(("ically", "ic"), ("ably", "able"), ("ibly", "ible"), ("ily", "y"), ("lly", "ll"), ("ly", "")),
    not_adverbs=frozenset({
        "costly", "daily", "deadly", "early", "elderly", "friendly", "ghostly", "hourly", "lively",
        "lonely", "lovely", "monthly", "orderly", "quarterly", "scholarly", "timely", "weekly",
        "worldly", "yearly", "assembly", "family", "italy", "holy",
    }),
    job_titles=frozenset({
        "head", "vp", "svp", "evp", "avp", "chief", "senior", "junior", "principal", "partner", "managing",
        "lead", "staff", "ceo", "cto", "cfo", "coo", "cpo", "cmo", "founder", "co-founder", "cofounder",
        "president", "senator", "governor", "mayor", "chancellor", "minister", "detective", "professor", "sir",
        "dame", "dr", "mr", "mrs", "ms", "md",
    }),
    name_titles=frozenset({
        "vp", "svp", "evp", "avp", "partner", "ceo", "cto", "cfo", "coo", "cpo", "cmo", "founder", "co-founder", "cofounder",
        "president", "senator", "governor", "mayor", "chancellor", "minister", "detective", "professor", "sir",
        "dame", "dr", "mr", "mrs", "ms", "md",
    }),
    abbreviations=frozenset({
        "dr", "mr", "mrs", "ms", "mx", "prof", "sr", "jr", "st", "rev", "hon", "gen", "col", "capt", "lt", "sgt",
        "inc", "ltd", "corp", "co", "vs", "no", "approx", "ca", "cf", "fig", "vol",
    }),
    section_labels=frozenset({
        "abstract", "aim", "aims", "background", "conclusion", "conclusions", "context", "design",
        "discussion", "findings", "importance", "interpretation", "introduction", "measurements",
        "methods", "objective", "objectives", "outcomes", "participants", "purpose", "rationale",
        "results", "setting", "settings", "summary", "note", "update", "todo", "warning", "tip",
        "important", "already", "edit", "fyi", "done",
    }),
    # Not "it" as a subject: in a note about a thing, "It also includes …" is as often said
    # of the last thing named as of the note.
    subject_pronouns=frozenset({"he", "she", "they", "we", "i"}),
    object_pronouns=frozenset({"him", "her", "it", "them", "us", "me"}),
    possessives=frozenset({"its", "his", "her", "their", "our", "my"}),
    articles=frozenset({"the", "a", "an"}),
    determiners=frozenset({"the", "a", "an", "this", "that", "these", "those", "his", "her", "its", "their", "our", "my", "your"}),
    subject_openers=frozenset({
        "also", "then", "later", "earlier", "now", "today", "yesterday", "since", "in", "on", "at", "after",
        "before", "during", "first", "next", "finally", "meanwhile", "too", "again",
    }),
    self_nouns=frozenset({
        "company", "firm", "startup", "team", "fund", "round", "meeting", "event", "call", "session",
        "workshop", "project", "offsite", "kickoff",
    }),
    prepositions=frozenset({
        "of", "in", "at", "for", "from", "to", "with", "by", "on", "about", "into", "under", "over", "behind",
        "after", "before", "during", "between", "among",
    }),
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
            active=("founded", "co-founded", "cofounded", "founder of", "co-founder of", "cofounder of", "incorporated"),
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
                # "[[Tina]] joined as regulatory advisor": what she joined as, not a job.
                "joined as * advisor", "joined as * adviser",
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
