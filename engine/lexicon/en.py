"""English."""

from __future__ import annotations

from engine.lexicon import Lexicon

_PERSON_MARKS = frozenset({"people", "person", "persons", "contacts", "contact"})

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
    person_words=frozenset({"someone", "somebody", "anyone", "anybody", *_PERSON_MARKS}),
    clause_openers=frozenset({"and", "but", "so", "or", "then"}),
    person_marks=_PERSON_MARKS,
    organisation_marks=frozenset(
        {"companies", "company", "organizations", "organization", "organisations", "organisation"}
        | {"orgs", "firms", "startups"}
    ),
    any_note_folders=frozenset(
        {"note", "notes", "file", "files", "doc", "docs", "document", "documents", "misc", "stuff"}
    ),
    resemblance=r"similar|resembl\w*|comparable|alike|akin|like",
)
# fmt: on
