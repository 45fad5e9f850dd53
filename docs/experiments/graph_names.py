"""Name vertices of a vault's graph, counted by their first word's part of speech, and a sample to check by hand.

docs/GRAPH.md reports what this prints. The part of speech is read independently of the
engine's lexicon: a closed list of function words, then WordNet 3.0 (Debian's
`wordnet-base`, /usr/share/wordnet), the reading with the most tagged senses winning:

    .venv/bin/python docs/experiments/graph_names.py VAULT INDEX_DIR            # the counts
    .venv/bin/python docs/experiments/graph_names.py VAULT INDEX_DIR --sample 17 --seed 4646
"""

from __future__ import annotations

import argparse
import functools
import random
from collections import Counter
from pathlib import Path

from engine.api import Engine

WORDNET = Path("/usr/share/wordnet")
# Determiners, pronouns, prepositions, conjunctions, auxiliaries, modals, particles.
FUNCTION_WORDS = frozenset(
    ["a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our", "their", "some", "any", "no", "every", "each", "either", "neither", "all", "both", "few", "many", "much", "several", "such", "what", "which", "whose", "whatever", "whichever", "i", "me", "you", "he", "him", "she", "it", "we", "us", "they", "them", "myself", "yourself", "himself", "herself", "itself", "ourselves", "themselves", "who", "whom", "mine", "yours", "hers", "ours", "theirs", "one", "ones", "someone", "somebody", "something", "anyone", "anybody", "anything", "everyone", "everybody", "everything", "nobody", "nothing", "about", "above", "across", "after", "against", "along", "amid", "among", "around", "as", "at", "before", "behind", "below", "beneath", "beside", "besides", "between", "beyond", "by", "despite", "down", "during", "except", "for", "from", "in", "inside", "into", "like", "near", "of", "off", "on", "onto", "out", "outside", "over", "past", "per", "since", "through", "throughout", "till", "to", "toward", "towards", "under", "underneath", "unlike", "until", "up", "upon", "via", "with", "within", "without", "and", "but", "or", "nor", "so", "yet", "because", "although", "though", "if", "unless", "whereas", "while", "whether", "than", "once", "when", "whenever", "where", "wherever", "why", "how", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "can", "could", "may", "might", "must", "shall", "should", "will", "would", "ought", "not", "there", "here", "then", "also", "just", "only", "even", "too", "very"]
)
_DETACH = {
    "noun": [("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")],
    "verb": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")],
    "adj": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "adv": [],
}
_NAMES = {"noun": "noun", "verb": "verb", "adj": "adjective", "adv": "adverb"}


@functools.cache
def _tagged_senses(pos: str) -> dict[str, int]:
    """Lemma → tagged sense count + 1 (a listed reading counts even untagged)."""
    counts = {}
    for line in (WORDNET / f"index.{pos}").read_text(encoding="latin-1").splitlines():
        if line.startswith(" "):
            continue
        parts = line.split()
        pointers = int(parts[3])
        counts[parts[0]] = int(parts[5 + pointers]) + 1
    return counts


@functools.cache
def _exceptions(pos: str) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for line in (WORDNET / f"{pos}.exc").read_text(encoding="latin-1").splitlines():
        form, *lemmas = line.split()
        table.setdefault(form, []).extend(lemmas)
    return table


def _lemmas(word: str, pos: str) -> set[str]:
    """WordNet's morphy, in short: the word, its exception entries, its detached suffixes."""
    index = _tagged_senses(pos)
    found = {lemma for lemma in (word, *_exceptions(pos).get(word, [])) if lemma in index}
    for suffix, ending in _DETACH[pos]:
        if word.endswith(suffix) and len(word) > len(suffix) + 1 and word[: -len(suffix)] + ending in index:
            found.add(word[: -len(suffix)] + ending)
    if pos == "verb" and word.endswith(("ed", "ing")):  # shipped, planning
        stem = word[:-2] if word.endswith("ed") else word[:-3]
        if len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in index:
            found.add(stem[:-1])
    return found


def part_of_speech(word: str) -> str:
    """"function word", "verb", "adverb", "adjective", "noun" or "not in dictionary"."""
    key = word.casefold().strip(".,:;")
    if key in FUNCTION_WORDS:
        return "function word"
    best, best_count = "not in dictionary", 0
    for pos in ("noun", "verb", "adj", "adv"):
        count = max((_tagged_senses(pos)[lemma] for lemma in _lemmas(key, pos)), default=0)
        if count > best_count:
            best, best_count = _NAMES[pos], count
    return best


def name_labels(vault: Path, index_dir: Path) -> list[str]:
    """The labels of the graph's name vertices that some edge still holds, indexed without the model."""
    with Engine.open(vault, index_dir=index_dir, embedder=None) as engine:
        engine.reindex(embed=False)
        view = engine._graph.view()  # an experiment reads the graph as it is, not through the façade
        assert view is not None
        snapshot = view._snapshot
        labels = []
        for number, vertex in enumerate(snapshot.vertices):
            entity = view.entity(vertex.key) if snapshot.index.get(vertex.key) == number else None
            if entity is not None and entity.kind == "name" and entity.degree:
                labels.append(entity.label)
        return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("vault", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--sample", type=int, default=0, help="also print this many names drawn at random")
    parser.add_argument("--seed", type=int, default=45)
    args = parser.parse_args()
    labels = name_labels(args.vault, args.index_dir)
    counts = Counter(part_of_speech(label.split()[0]) for label in labels)
    kinds = ("noun", "adjective", "not in dictionary", "verb", "adverb", "function word")
    print(f"{len(labels)} names: " + ", ".join(f"{kind} {counts[kind]}" for kind in kinds))
    for label in random.Random(args.seed).sample(sorted(labels), min(args.sample, len(labels))):
        print(f"  {label}")


if __name__ == "__main__":
    main()
