"""A deterministic synthetic vault for benchmarks: people, projects, meetings, dailies, topics.

Notes link each other with wikilinks, carry aliases and tags in frontmatter, have
headings, a long-tailed length mix (50-3,000 words), Zipf-distributed words from
a large made-up technical lexicon, and the odd typo — so that index sizes, lexicon
sizes and graph degrees look like a real personal vault's, not like lorem ipsum.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# fmt: off
_COMMON = _split(
    "the of and to in is that for it as with was on be by this are at from or have an they which "
    "one you were all we can her has there been if more when will would who so no out up into "
    "than them could about other some what time only its also these two may first then do any "
    "like new now over such our made way many after did most where before must through back years "
    "much should well people because each just those how too little state good very make world "
    "still own see men work long here between both under never same another know while last might "
    "great year since against come right used take three states himself few house use during "
    "without again place around however home small found thought went say part once general high "
    "upon school every does got united left number course war until always away something fact "
    "though water less public put think almost hand enough far took head yet government system "
    "better set told nothing night end why called didn't eyes find going look asked later knew "
    "point next program city business give group toward young days let room president side social "
    "given present several order national possible rather second face per among form important often "
    "things looked early white case john become large big need four within felt along children saw "
    "best church ever least power development light thing seemed family interest want members mind "
    "country area others done turned although open problem real god service certain kind different "
    "thus began door help means sense whole matter perhaps itself york times law human line above "
    "name example action company hands local show whether five history gave today either act feet "
    "across taken past quite anything seen having death week experience body word half really field "
    "am car words already themselves information tell together college shall money period held "
    "keep sure probably free seems political real behind cannot miss market value shown whose"
)
_DOMAIN = _split(
    "sync offline upload photo tile cache map layer schema migration release rollout crash "
    "session metric dashboard alert latency throughput index query search ranking embedding vector "
    "graph entity note vault backlink tag alias heading chunk token model batch queue worker "
    "retry timeout deadline budget roadmap milestone sprint retro standup demo review design "
    "prototype feedback customer partner contract invoice pricing onboarding support ticket bug "
    "feature flag experiment cohort funnel churn retention signup login password token permission "
    "role audit compliance privacy consent export import backup restore replica shard cluster node "
    "container deploy pipeline build test coverage lint format refactor api endpoint client server "
    "protocol payload header cookie browser mobile android ios tablet sensor gps battery network "
    "bandwidth storage database table column row partition vacuum transaction lock conflict merge "
    "branch commit tag version changelog license vendor hardware warranty procurement hiring "
    "interview candidate offer salary review goal okr plan estimate risk dependency blocker"
)
_SYLLABLES = _split(
    "ka ro mi ta ne so lu vi pa de ri mo sa te no ga be zu fi ho ki la me to ru na di po "
    "ver tex lin gor pan dul mar sen tor vik bal cor fen gil hal jor kel lum nor pel quin "
    "ras sul tam urn vel wix yor zan"
)
_FIRST = _split(
    "Alice Bruno Chiara Dmitri Elena Farid Greta Hana Ingrid José Kwame Leo Maya Nadia Omar "
    "Priya Quentin Rosa Sven Tomasz Uma Victor Wen Xavier Yusuf Zoë Aiko Bence Carmen Dario "
    "Esther Felix Gloria Hugo Ilse Jonas Kira Lars Mina Nils Olga Pablo Rania Stefan Tariq "
    "Ulla Vera Wanda Yara Zeno"
)
_LAST = _split(
    "Abbott Bauer Costa Dalton Eriksen Fischer Garcia Hoffmann Ibrahim Jensen Kowalski Larsen "
    "Moreau Novak Okafor Petrov Quinn Rossi Schmidt Taylor Ueda Varga Weber Xu Yilmaz Zimmermann "
    "Andersen Brandt Castillo Dubois Engel Fontaine Gruber Horvath Ivanova Jovanovic Keller "
    "Lindqvist Meyer Nakamura Oliveira Pereira Ramos Silva Tanaka Ulrich Vogel Wagner Young Ziegler"
)
_PROJECT_WORDS = _split(
    "Atlas Beacon Cobalt Delta Ember Falcon Granite Harbor Iris Juniper Kestrel Lantern Meridian "
    "Nimbus Orchid Pioneer Quartz Raven Summit Tundra Umbra Vertex Willow Zephyr Aurora Basalt "
    "Cedar Dune Echo Fjord Glacier Horizon"
)
_PROJECT_KINDS = ("Migration", "Redesign", "Platform", "Pilot", "Rollout", "Audit", "Sync", "Portal", "Dashboard", "Launch")
_MEETING_KINDS = ("Sprint Review", "Planning", "Retro", "1-1", "Design Review", "Customer Call", "Board Meeting", "Kickoff", "Incident Review")
_TOPIC_HEADS = ("Overview", "Background", "Details", "Open questions", "Decisions", "Notes", "Links", "Next steps", "Risks", "Ideas")
# fmt: on


@dataclass(frozen=True)
class SynthSpec:
    """What to generate: how many notes, and the seed that fixes every choice."""

    notes: int
    seed: int = 42


@dataclass
class SynthVault:
    """What was generated: the root and facts the benchmark builds queries from."""

    root: Path
    paths: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    words: int = 0


class _Words:
    """Zipf-distributed words from common English, domain terms and a made-up lexicon."""

    def __init__(self, rng: random.Random, lexicon_size: int) -> None:
        made_up: list[str] = []
        seen: set[str] = set(_COMMON) | set(_DOMAIN)
        while len(made_up) < lexicon_size:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 4))))
            if word not in seen:
                seen.add(word)
                made_up.append(word)
        # Rank order: common words first, then domain, then the long tail.
        self.vocabulary = [*_COMMON, *_DOMAIN, *made_up]
        weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.vocabulary))]
        self._cumulative = list(itertools.accumulate(weights))
        self._rng = rng

    def sample(self, count: int) -> list[str]:
        total = self._cumulative[-1]
        rand = self._rng.random
        vocab = self.vocabulary
        cum = self._cumulative
        return [vocab[bisect.bisect(cum, rand() * total)] for _ in range(count)]


class _Writer:
    """Builds one note's text from sentences, headings, links and typos."""

    def __init__(self, rng: random.Random, words: _Words, people: list[str], projects: list[str]) -> None:
        self.rng = rng
        self.words = words
        self.people = people
        self.projects = projects

    def typo(self, word: str) -> str:
        if len(word) < 4:
            return word
        i = self.rng.randrange(len(word) - 1)
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]

    def sentence(self, extra: list[str] | None = None) -> str:
        rng = self.rng
        words = self.words.sample(rng.randint(6, 18))
        if rng.random() < 0.08:
            j = rng.randrange(len(words))
            words[j] = self.typo(words[j])
        if extra:
            for item in extra:
                words.insert(rng.randrange(len(words) + 1), item)
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", "!"))

    def mention(self) -> str:
        """A link or a plain-text mention of a person or project, Obsidian style."""
        rng = self.rng
        if rng.random() < 0.6 and self.people:
            name = rng.choice(self.people)
            roll = rng.random()
            if roll < 0.5:
                return f"[[{name}]]"
            if roll < 0.7:
                return f"[[{name}|{name.split()[0]}]]"
            return name
        if self.projects:
            name = rng.choice(self.projects)
            return f"[[{name}]]" if rng.random() < 0.7 else name
        return ""

    def body(self, word_budget: int, headings: tuple[str, ...]) -> str:
        rng = self.rng
        parts: list[str] = []
        written = 0
        section_words = max(60, word_budget // max(1, len(headings)))
        for heading in headings:
            parts.append(f"## {heading}\n")
            section = 0
            while section < section_words and written < word_budget:
                if rng.random() < 0.25:
                    items = [f"- {self.sentence([self.mention()] if rng.random() < 0.3 else None)}" for _ in range(rng.randint(2, 5))]
                    block = "\n".join(items)
                else:
                    extras = [self.mention() for _ in range(rng.choice((0, 0, 1, 1, 2)))]
                    block = " ".join(self.sentence(extras if i == 0 else None) for i in range(rng.randint(2, 6)))
                if rng.random() < 0.05:
                    block += f" #{rng.choice(_DOMAIN)}"
                count = len(block.split())
                section += count
                written += count
                parts.append(block + "\n")
            if written >= word_budget:
                break
        return "\n".join(parts)


def _length(rng: random.Random) -> int:
    """A long-tailed note length: median ~220 words, clipped to 50-3,000."""
    return max(50, min(3000, int(rng.lognormvariate(math.log(220), 0.9))))


def _frontmatter(tags: list[str], aliases: list[str]) -> str:
    lines = ["---"]
    if tags:
        lines.append(f"tags: [{', '.join(tags)}]")
    if aliases:
        lines.append("aliases:")
        lines.extend(f"  - {a}" for a in aliases)
    lines.append("---\n")
    return "\n".join(lines)


def generate(root: Path, spec: SynthSpec) -> SynthVault:
    """Write `spec.notes` Markdown notes under `root` (created); same seed, same bytes."""
    rng = random.Random(spec.seed)
    root.mkdir(parents=True, exist_ok=True)
    total = spec.notes
    # A vault's lexicon grows with its size (Heaps' law); keep that shape.
    words = _Words(rng, lexicon_size=min(200_000, 4000 + int(60 * total ** 0.85)))
    n_people = max(3, total // 12)
    n_projects = max(2, total // 40)
    n_meetings = max(2, total // 5)
    n_daily = max(2, total // 5)
    n_topics = max(0, total - n_people - n_projects - n_meetings - n_daily)

    people: list[str] = []
    seen_people: set[str] = set()
    for i in itertools.count():
        if len(people) >= n_people:
            break
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        base, suffix = name, i
        while name in seen_people:  # namesakes get a number, as people do in a vault
            name = f"{base} {_roman(suffix)}"
            suffix += 1
        seen_people.add(name)
        people.append(name)
    projects: list[str] = []
    for i in range(n_projects):
        base = f"{rng.choice(_PROJECT_WORDS)} {rng.choice(_PROJECT_KINDS)}"
        projects.append(base if base not in projects else f"{base} {i}")

    writer = _Writer(rng, words, people, projects)
    vault = SynthVault(root=root, people=people, projects=projects)

    def emit(rel: str, text: str) -> None:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        vault.paths.append(rel)
        vault.words += len(text.split())

    for name in people:
        first, last = name.split()[0], name.split()[1]
        aliases = [first, f"{first[0]}{last[0]}"] if rng.random() < 0.7 else [first]
        role = rng.choice(("engineer", "designer", "manager", "customer", "partner", "researcher"))
        project = rng.choice(projects)
        text = _frontmatter(["person", f"role/{role}"], aliases)
        text += f"# {name}\n\n{name} is a {role} working on [[{project}]].\n\n"
        text += writer.body(_length(rng) // 2, ("Context", "Notes", "Follow-ups"))
        emit(f"People/{name}.md", text)

    for name in projects:
        codename = name.split()[0]
        lead = rng.choice(people)
        status = rng.choice(("active", "paused", "done", "planned"))
        text = _frontmatter(["project", f"status/{status}"], [codename])
        text += f"# {name}\n\nLead: [[{lead}]]. Codename {codename}.\n\n"
        text += writer.body(_length(rng) * 2, ("Goal", "Scope", "Milestones", "Risks", "Decisions", "Log"))
        emit(f"Projects/{name}.md", text)

    start = date(2022, 1, 3)
    for i in range(n_meetings):
        day = start + timedelta(days=rng.randrange(1500))
        kind = rng.choice(_MEETING_KINDS)
        project = rng.choice(projects)
        title = f"{day.isoformat()} {project.split()[0]} {kind} {i}"
        attendees = rng.sample(people, min(len(people), rng.randint(2, 6)))
        text = _frontmatter(["meeting", kind.lower().replace(" ", "-")], [])
        text += f"# {title}\n\nProject: [[{project}]]\nAttendees: {', '.join(f'[[{p}]]' for p in attendees)}\n\n"
        text += writer.body(_length(rng), ("Agenda", "Discussion", "Decisions", "Action items"))
        actions = "\n".join(f"- [ ] [[{rng.choice(attendees)}]] {writer.sentence()}" for _ in range(rng.randint(1, 4)))
        emit(f"Meetings/{day.year}/{title}.md", f"{text}\n{actions}\n")

    for i in range(n_daily):
        day = start + timedelta(days=i)
        text = _frontmatter(["daily"], [])
        text += f"# {day.strftime('%A %d %B %Y')}\n\n"
        text += writer.body(max(50, _length(rng) // 3), ("Standup", "Today", "Notes"))
        emit(f"Daily/{day.isoformat()}.md", text)

    for i in range(n_topics):
        head = " ".join(w.capitalize() for w in words.sample(rng.randint(2, 4)))
        title = f"{head} {i}"
        tags = [rng.choice(_DOMAIN) for _ in range(rng.randint(0, 3))]
        aliases = [head] if rng.random() < 0.15 else []
        sections = tuple(rng.sample(_TOPIC_HEADS, rng.randint(1, 5)))
        text = _frontmatter(tags, aliases) + f"# {title}\n\n" + writer.body(_length(rng), sections)
        folder = rng.choice(("Reference", "Inbox", "Ideas", "Reference/Archive"))
        emit(f"{folder}/{title}.md", text)

    vault.paths.sort()
    return vault


def keyword_queries(vault: SynthVault, count: int, seed: int = 7) -> list[str]:
    """Realistic queries over a synthetic vault: names, project names, topic words, phrases."""
    rng = random.Random(seed)
    pool = _DOMAIN
    queries: list[str] = []
    while len(queries) < count:
        kind = len(queries) % 5
        if kind == 0 and vault.people:
            queries.append(rng.choice(vault.people))
        elif kind == 1 and vault.projects:
            queries.append(f"{rng.choice(vault.projects).split()[0].lower()} {rng.choice(pool)}")
        elif kind == 2:
            queries.append(f"{rng.choice(pool)} {rng.choice(pool)}")
        elif kind == 3 and vault.people:
            queries.append(f"meeting with {rng.choice(vault.people).split()[0]} about {rng.choice(pool)}")
        else:
            queries.append(f"{rng.choice(pool)} {rng.choice(_COMMON[40:200])} {rng.choice(pool)}")
    return queries


def syntax_queries(vault: SynthVault, count: int, seed: int = 11) -> list[str]:
    """Queries in the query language over a synthetic vault, one feature each in turn:
    a filter plus words, a phrase from a note, an exclusion, a typo (one edit), a folder
    or date filter with a name."""
    rng = random.Random(seed)
    pool = _DOMAIN
    queries: list[str] = []
    while len(queries) < count:
        kind = len(queries) % 5
        if kind == 0:
            queries.append(f"tag:{rng.choice(pool)} {rng.choice(pool)} {rng.choice(pool)}")
        elif kind == 1:
            queries.append(_phrase_query(vault, rng) or f'"{rng.choice(pool)} {rng.choice(pool)}"')
        elif kind == 2:
            queries.append(f"{rng.choice(pool)} {rng.choice(pool)} -{rng.choice(pool)}")
        elif kind == 3:
            word = rng.choice([w for w in pool if len(w) >= 5])
            name = rng.choice(vault.people).split()[0] if vault.people else rng.choice(pool)
            queries.append(f"{_one_edit(word, rng)} {name.lower()}")
        elif vault.projects:
            folder = rng.choice(("path:Meetings", "after:2023-01-01", "path:Projects"))
            queries.append(f"{folder} {rng.choice(vault.projects).split()[0].lower()} {rng.choice(pool)}")
        else:
            queries.append(f"after:2023-01-01 {rng.choice(pool)}")
    return queries


def _phrase_query(vault: SynthVault, rng: random.Random) -> str | None:
    """Two adjacent words of a real note's body, quoted (a phrase the vault holds)."""
    if not vault.paths:
        return None
    text = (vault.root / rng.choice(vault.paths)).read_text(encoding="utf-8")
    words = [w for w in text.split("---")[-1].split() if w.isalpha() and len(w) > 2]
    if len(words) < 2:
        return None
    start = rng.randrange(len(words) - 1)
    return f'"{words[start].lower()} {words[start + 1].lower()}"'


def _one_edit(word: str, rng: random.Random) -> str:
    """The word with one typing slip: two letters swapped, one dropped or one doubled."""
    at = rng.randrange(1, len(word) - 1)
    slip = rng.randrange(3)
    if slip == 0 and word[at] != word[at + 1]:
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    if slip != 2:
        return word[:at] + word[at + 1 :]
    return word[:at] + word[at] + word[at:]


def _roman(number: int) -> str:
    return f"{number % 97 + 2}"
