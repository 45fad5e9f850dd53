"""Write the abstention sets: questions about people, companies and terms a vault does not contain.

Each question is shaped like the questions people ask of such a vault (who someone is, where
they work, who founded or backs a company, what a term means, what a study found) but names
something invented: a name made of syllables, checked to be absent from every word of the vault
(and from its near spellings, so a typo correction cannot turn it into a real name). No
question of a dataset's query file is read or copied; only the vault's words are, to check
the invented names against.

    .venv/bin/python tests/data/make_abstention.py ../shared/datasets

writes tests/data/abstention/DATASET.tsv (header `qid<TAB>query`) for each vault found, and
tests/data/abstention/sample.tsv (20 questions) for `sample_vault/`.
The seed is fixed: the same vaults give the same questions.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

SEED = 4848
PER_VAULT = 40
DATASETS = ("brainbench", "hotpotqa-sample", "musique-sample", "beir-scifact")
OUT = Path(__file__).resolve().parent / "abstention"

_ONSETS = (
    "b",
    "d",
    "f",
    "g",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "br",
    "dr",
    "kl",
    "tr",
    "qu",
    "th",
    "sk",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ei")
_CODAS = ("", "", "n", "r", "l", "x", "th", "nd", "sk", "rn")
_FIRST = (
    "Orla",
    "Teodor",
    "Wilma",
    "Casimir",
    "Ines",
    "Bertil",
    "Ysolde",
    "Marek",
    "Odile",
    "Fenwick",
    "Ludmila",
    "Ansel",
)
_COMPANY_SUFFIXES = ("", "", " Labs", " Systems", " Capital", " Robotics", " Health")
_TERM_ENDINGS = ("ism", "ase", "ine", "ology", "ation", "ide")

# Question shapes, one set per kind of vault. {person}, {company}, {term} and {place} are invented.
_PEOPLE = (
    "Who is {person}?",
    "Where does {person} work?",
    "Who founded {company}?",
    "Who invested in {company}?",
    "Who attended the {company} board meeting?",
    "What does {person} think about {term}?",
    "Which company did {person} start?",
    "Who advises {company}?",
    "When was {company} founded and by whom?",
    "What is {term} and who uses it?",
)
_ENCYCLOPEDIA = (
    "Who was {person}?",
    "In which country was {person} born?",
    "What year was {company} founded?",
    "Who directed the film {term}?",
    "Which river flows through {place}?",
    "What is the capital of {place}?",
    "Which team did {person} play for?",
    "Who wrote the novel {term}?",
    "What is {place} known for?",
    "Which party did {person} lead?",
)
_SCIENCE = (
    "{term} reduces the risk of heart disease.",
    "{term} treatment improves survival in patients.",
    "What does {term} do in cells?",
    "{term} is associated with higher mortality.",
    "The {term} pathway regulates inflammation.",
    "{person} showed that {term} affects memory.",
    "{term} deficiency causes muscle weakness.",
    "{term} levels increase with age.",
)
_SHAPES = {"brainbench": _PEOPLE, "beir-scifact": _SCIENCE, "sample": _PEOPLE}
# The project's own sample vault gets a set too: the door test asks it through a real client.
_SAMPLE_VAULT = Path(__file__).resolve().parents[2] / "sample_vault"


def vault_words(vault: Path) -> set[str]:
    """Every word of every note, folded to lower case."""
    words: set[str] = set()
    for note in vault.rglob("*.md"):
        words.update(
            re.findall(r"[^\W_]+", note.read_text(encoding="utf-8", errors="replace").casefold())
        )
    return words


def _near(word: str, words: set[str]) -> bool:
    """Whether the vault holds `word`, or a word one deletion, insertion or substitution from it."""
    if word in words:
        return True
    letters = "abcdefghijklmnopqrstuvwxyz"
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits = {a + b[1:] for a, b in splits if b}
    edits |= {a + c + b[1:] for a, b in splits if b for c in letters}
    edits |= {a + c + b for a, b in splits for c in letters}
    return not edits.isdisjoint(words)


class Inventor:
    """Makes names no note of a vault contains."""

    def __init__(self, words: set[str], rng: random.Random) -> None:
        self.words = words
        self.rng = rng
        self.used: set[str] = set()

    def word(self, syllables: int, ending: str = "") -> str:
        while True:
            made = (
                "".join(
                    self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS)
                    for _ in range(syllables)
                )
                + ending
            )
            if len(made) >= 5 and made not in self.used and not _near(made, self.words):
                self.used.add(made)
                return made

    def person(self) -> str:
        first = self.rng.choice(_FIRST)
        return f"{first} {self.word(2).capitalize()}"

    def company(self) -> str:
        return self.word(2).capitalize() + self.rng.choice(_COMPANY_SUFFIXES)

    def term(self) -> str:
        return self.word(2, self.rng.choice(_TERM_ENDINGS))

    def place(self) -> str:
        return self.word(3).capitalize()


def questions(dataset: str, words: set[str], count: int = PER_VAULT) -> list[str]:
    """`count` questions about invented names, in the shapes of `dataset`'s kind of vault."""
    rng = random.Random(f"{SEED}:{dataset}")
    inventor = Inventor(words, rng)
    shapes = _SHAPES.get(dataset, _ENCYCLOPEDIA)
    out: list[str] = []
    for number in range(count):
        shape = shapes[number % len(shapes)]
        text = shape.format(
            person=inventor.person(),
            company=inventor.company(),
            term=inventor.term(),
            place=inventor.place(),
        )
        out.append(text[0].upper() + text[1:])
    return out


def main(datasets_root: Path) -> int:
    OUT.mkdir(exist_ok=True)
    for dataset in (*DATASETS, "sample"):
        vault = _SAMPLE_VAULT if dataset == "sample" else datasets_root / dataset / "vault"
        if not vault.is_dir():
            print(f"skipped {dataset}: no {vault}", file=sys.stderr)
            continue
        asked = questions(dataset, vault_words(vault), 20 if dataset == "sample" else PER_VAULT)
        lines = [
            "qid\tquery",
            *(f"none-{dataset}-{number:02d}\t{text}" for number, text in enumerate(asked, start=1)),
        ]
        (OUT / f"{dataset}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{dataset}: {len(asked)} questions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/datasets")))
