"""Unit tests for engine.vault: scanning, safe reading, Obsidian-style parsing, link resolution."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.errors import CairnError, VaultNotFound
from engine.records import Link
from engine.vault import (
    LinkResolver,
    NoteUnreadable,
    ScanResult,
    VaultFile,
    parse_note,
    read_note,
    scan_vault,
)

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def links_of(text: str, path: str = "n.md") -> list[Link]:
    return list(parse_note(path, text).links)


def targets(text: str) -> list[str]:
    return [link.target for link in links_of(text)]


def write(root: Path, rel: str, content: str | bytes = "x") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# frontmatter
# ---------------------------------------------------------------------------


def test_frontmatter_parsed_and_excluded_from_body() -> None:
    note = parse_note("a.md", "---\ntitle: Hello\ncount: 3\n---\nBody line\n")
    assert note.title == "Hello"
    assert note.body == "Body line\n"
    assert note.body_line_offset == 4
    assert ("title", "Hello") in note.frontmatter
    assert ("count", "3") in note.frontmatter
    assert note.warnings == ()


def test_frontmatter_closed_with_dots() -> None:
    note = parse_note("a.md", "---\ntitle: Dots\n...\nBody\n")
    assert note.title == "Dots"
    assert note.body == "Body\n"
    assert note.body_line_offset == 3


def test_frontmatter_pairs_are_scalars_and_list_items() -> None:
    note = parse_note("a.md", "---\ntags: [a, b]\nflag: true\nempty:\nnested: {x: 1}\nmixed: [1, {y: 2}]\n---\n")
    assert note.frontmatter == (
        ("tags", "a"),
        ("tags", "b"),
        ("flag", "True"),
        ("empty", ""),
        ("mixed", "1"),
    )


def test_empty_frontmatter() -> None:
    note = parse_note("a.md", "---\n---\nText\n")
    assert note.body == "Text\n"
    assert note.body_line_offset == 2
    assert note.warnings == ()


def test_frontmatter_without_closing_fence_is_body() -> None:
    text = "---\ntitle: nope\nmore text\n"
    note = parse_note("a.md", text)
    assert note.body == text
    assert note.body_line_offset == 0
    assert note.title == "a"


def test_frontmatter_must_start_at_first_line() -> None:
    text = "\n---\ntitle: nope\n---\n"
    note = parse_note("a.md", text)
    assert note.body_line_offset == 0
    assert note.title == "a"


def test_malformed_yaml_warns_keeps_body_and_drops_metadata() -> None:
    text = "---\ntitle: ok\ntags: [unclosed\nfoo: bar\n---\n# Real Title\nBody [[Link]]\n"
    note = parse_note("folder/a.md", text)
    assert len(note.warnings) == 1
    warning = note.warnings[0]
    assert warning.startswith("malformed frontmatter: ")
    assert "line" in warning
    # Metadata from the broken block is ignored...
    assert note.title == "Real Title"
    assert note.tags == ()
    assert note.frontmatter == ()
    # ...but the block is still not part of the body.
    assert note.body.startswith("# Real Title")
    assert note.body_line_offset == 5
    assert note.links[0].line == 7


def test_malformed_yaml_reports_file_line() -> None:
    text = "---\na: 1\nb: : :\n---\n"
    note = parse_note("a.md", text)
    assert note.warnings and "line 3" in note.warnings[0]


def test_invalid_date_in_yaml_is_a_warning_not_a_crash() -> None:
    note = parse_note("a.md", "---\ndate: 2023-02-30\n---\nx\n")
    assert note.warnings and note.warnings[0].startswith("malformed frontmatter")
    assert note.body == "x\n"


def test_non_mapping_frontmatter_warns() -> None:
    note = parse_note("a.md", "---\n- a\n- b\n---\nbody\n")
    assert note.warnings and "not a key-value mapping" in note.warnings[0]
    assert note.body == "body\n"
    assert note.aliases == ()


def test_frontmatter_with_crlf_and_bom() -> None:
    note = parse_note("a.md", "\ufeff---\r\ntitle: T\r\n---\r\n[[X]]\r\n")
    assert note.title == "T"
    assert note.body == "[[X]]\n"
    assert note.links[0].line == 4


# ---------------------------------------------------------------------------
# title, aliases, tags
# ---------------------------------------------------------------------------


def test_title_precedence_frontmatter_then_h1_then_stem() -> None:
    assert parse_note("x/Stem.md", "---\ntitle: FM\n---\n# H1\n").title == "FM"
    assert parse_note("x/Stem.md", "## H2 first\n# H1\n").title == "H1"
    assert parse_note("x/Stem.md", "no headings\n").title == "Stem"
    assert parse_note("x/My.Note.md", "").title == "My.Note"


def test_title_ignores_blank_or_non_string_frontmatter_title() -> None:
    assert parse_note("S.md", "---\ntitle: ''\n---\n# H\n").title == "H"
    assert parse_note("S.md", "---\ntitle: [a, b]\n---\n").title == "S"
    assert parse_note("S.md", "---\ntitle: 2024\n---\n").title == "2024"


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("# Simon &amp; Simon", "Simon & Simon"),  # as the heading renders
        ("# Rock &#39;n&#39; roll &#x2014; live", "Rock 'n' roll — live"),
        ("# Fish &AMP; chips", "Fish & chips"),
        ("# Not &notaname; nor \\&amp; nor `&amp;`", "Not &notaname; nor \\&amp; nor `&amp;`"),
        ("# &nbsp;", "&nbsp;"),  # a title of nothing but a blank keeps what was written
    ],
)
def test_a_title_from_its_heading_reads_character_references_as_characters(heading: str, title: str) -> None:
    assert parse_note("S.md", heading + "\n\nBody &amp; more.\n").title == title


def test_title_h1_in_code_is_not_title() -> None:
    assert parse_note("S.md", "```\n# not title\n```\n").title == "S"


def test_title_from_h1_with_wikilink_uses_display() -> None:
    assert parse_note("S.md", "# About [[Target|Display]] and [[Other]]\n").title == (
        "About Display and Other"
    )


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("aliases: [One, Two]", ("One", "Two")),
        ("aliases:\n  - One\n  - Two", ("One", "Two")),
        ("aliases: Single", ("Single",)),
        ("aliases: One, Two ,  ,Three", ("One", "Two", "Three")),
        ("alias: Solo", ("Solo",)),
        ("aliases: [One, '', one, Two, One]", ("One", "Two")),
        ("aliases:", ()),
        ("aliases: [2024, {a: 1}]", ("2024",)),
    ],
)
def test_alias_forms(yaml_text: str, expected: tuple[str, ...]) -> None:
    note = parse_note("a.md", f"---\n{yaml_text}\n---\n")
    assert note.aliases == expected


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("tags: [a, b]", ("a", "b")),
        ("tags:\n  - '#a'\n  - b/c", ("a", "b/c")),
        ("tags: a, b c", ("a", "b", "c")),
        ("tags: '#one #two'", ("one", "two")),
        ("tag: single", ("single",)),
        ("tags: [A, a]", ("A",)),
    ],
)
def test_frontmatter_tag_forms(yaml_text: str, expected: tuple[str, ...]) -> None:
    assert parse_note("a.md", f"---\n{yaml_text}\n---\n").tags == expected


def test_inline_tags_rules() -> None:
    text = (
        "#start and #mid-dash #under_score #nested/child/leaf.\n"
        "not#tag, #1984 is none but #y1984 is; (#paren) \\#escaped\n"
        "# Heading is not a tag\n"
        "## Heading with #inheading\n"
        "Trailing slash #dir/ ok\n"
    )
    assert parse_note("a.md", text).tags == (
        "start",
        "mid-dash",
        "under_score",
        "nested/child/leaf",
        "y1984",
        "inheading",
        "dir",
    )


def test_inline_tags_unicode_and_case_dedupe() -> None:
    text = "#Café and #café and #CAFÉ #日本語\n"
    assert parse_note("a.md", text).tags == ("Café", "日本語")


def test_tags_merge_frontmatter_and_inline_deduped() -> None:
    note = parse_note("a.md", "---\ntags: [Project]\n---\nText #project #other\n")
    assert note.tags == ("Project", "other")


def test_tags_never_in_code_urls_or_links() -> None:
    text = (
        "```\n#infence\n```\n"
        "~~~\n#intilde\n~~~\n"
        "`#inline` and ``#double ` tick``\n"
        "    #indented code after blank? no: first line paragraph\n"
        "\n"
        "    #indentedcode\n"
        "\n"
        "https://example.com/page #real and https://x.org/#frag\n"
        "[[Note#Heading]] [label #inlabel](Other.md) [[Note|shown #inwiki]]\n"
    )
    tags = parse_note("a.md", text).tags
    assert tags == ("indented", "real")


# ---------------------------------------------------------------------------
# headings
# ---------------------------------------------------------------------------


def test_headings_with_file_lines_and_levels() -> None:
    text = "---\na: 1\n---\n# One\ntext\n## Two ##\n###### Six\n####### seven is not\n#NoSpace\n"
    headings = parse_note("a.md", text).headings
    assert [(h.level, h.text, h.line) for h in headings] == [
        (1, "One", 4),
        (2, "Two", 6),
        (6, "Six", 7),
    ]


def test_headings_not_in_code_blocks() -> None:
    text = (
        "```python\n# comment\n```\n"
        "~~~~\n# tilde\n```\n# still code\n~~~~\n"
        "    # indented code\n"
        "\n"
        "> # Quoted heading\n"
        "- # In a list\n"
        "# Real\n"
    )
    headings = parse_note("a.md", text).headings
    assert [(h.text, h.line) for h in headings] == [
        ("Quoted heading", 11),
        ("In a list", 12),
        ("Real", 13),
    ]


def test_unclosed_fence_swallows_rest() -> None:
    note = parse_note("a.md", "# Before\n```\n# inside\n[[Hidden]]\n")
    assert [h.text for h in note.headings] == ["Before"]
    assert note.links == ()


def test_empty_heading_ignored() -> None:
    assert parse_note("a.md", "#\n# ###\n").headings == ()


# ---------------------------------------------------------------------------
# links
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[Note]]", Link("Note", None, None, None, False, 1)),
        ("[[Note|Shown]]", Link("Note", "Shown", None, None, False, 1)),
        ("[[Note#Heading]]", Link("Note", None, "Heading", None, False, 1)),
        ("[[Note#Heading|Shown]]", Link("Note", "Shown", "Heading", None, False, 1)),
        ("[[Note#^block-1]]", Link("Note", None, None, "block-1", False, 1)),
        ("[[#Local heading]]", Link("", None, "Local heading", None, False, 1)),
        ("[[#^blk]]", Link("", None, None, "blk", False, 1)),
        ("![[image.png]]", Link("image.png", None, None, None, True, 1)),
        ("![[image.png|200]]", Link("image.png", "200", None, None, True, 1)),
        ("![[Note#Section]]", Link("Note", None, "Section", None, True, 1)),
        ("[[folder/Note.md]]", Link("folder/Note", None, None, None, False, 1)),
        ("[[ Spaced  | disp ]]", Link("Spaced", "disp", None, None, False, 1)),
        ("| [[Note\\|shown]] |", Link("Note", "shown", None, None, False, 1)),
        ("| [[Note#H\\|shown]] |", Link("Note", "shown", "H", None, False, 1)),
        ("[[doc.pdf#page=3]]", Link("doc.pdf", None, "page=3", None, False, 1)),
    ],
)
def test_wikilink_forms(text: str, expected: Link) -> None:
    assert links_of(text) == [expected]


def test_empty_wikilinks_ignored() -> None:
    assert links_of("[[]] [[ ]] [[|x]]") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[text](Note.md)", Link("Note", "text", None, None, False, 1, "markdown")),
        (
            "[t](Some%20Note.md#Heading%20Two)",
            Link("Some Note", "t", "Heading Two", None, False, 1, "markdown"),
        ),
        ("[t](<Some Note.md>)", Link("Some Note", "t", None, None, False, 1, "markdown")),
        ('[t](folder/Note.md "title")', Link("folder/Note", "t", None, None, False, 1, "markdown")),
        ("![alt](img/pic.png)", Link("img/pic.png", "alt", None, None, True, 1, "markdown")),
        ("[t](#Local)", Link("", "t", "Local", None, False, 1, "markdown")),
        ("[t](Note.md#^blk)", Link("Note", "t", None, "blk", False, 1, "markdown")),
        ("[](Note.md)", Link("Note", None, None, None, False, 1, "markdown")),
        ("[a %23 b](A%23B.md)", Link("A#B", "a %23 b", None, None, False, 1, "markdown")),
    ],
)
def test_markdown_link_forms(text: str, expected: Link) -> None:
    assert links_of(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "[web](https://example.com/a.md)",
        "[mail](mailto:someone@example.com)",
        "[x](obsidian://open?vault=a)",
        "[proto](//cdn.example.com/x.md)",
        "[ftp](ftp://host/file.md)",
    ],
)
def test_external_markdown_links_ignored(text: str) -> None:
    assert links_of(text) == []


def test_links_in_code_ignored() -> None:
    text = (
        "```\n[[InFence]] [x](InFence.md)\n```\n"
        "~~~md\n![[InTilde]]\n~~~\n"
        "Inline `[[InCode]]` and ``[[Double `tick`]]`` but [[Real]]\n"
        "\n"
        "    [[IndentedCode]]\n"
        "\n"
        "`code spanning\n[[AcrossLines]] lines` [[Real2]]\n"
        "\\`not code [[Real3]]\\`\n"
        "> ```\n> [[QuotedFence]]\n> ```\n"
    )
    assert targets(text) == ["Real", "Real2", "Real3"]


def test_wikilink_opening_before_backtick_wins() -> None:
    # Obsidian's own help links to a heading written in backticks this way.
    assert links_of("see [[#`move`|move]] here") == [Link("", "move", "`move`", None, False, 1)]


def test_unmatched_backtick_does_not_hide_links() -> None:
    assert targets("a ` b [[Visible]]") == ["Visible"]


def test_list_items_indented_four_spaces_are_not_code() -> None:
    text = "- item\n\n    - nested [[Nested]]\n"
    assert targets(text) == ["Nested"]


def test_link_line_numbers_with_frontmatter() -> None:
    text = "---\ntitle: T\naliases: [a]\n---\nline five [[A]]\n\n[[B]] and [c](C.md)\n"
    links = links_of(text)
    assert [(lk.target, lk.line) for lk in links] == [("A", 5), ("B", 7), ("C", 7)]


def test_links_in_order_of_appearance() -> None:
    assert targets("[m](M.md) [[W]] ![[E.png]] [n](N.md)") == ["M", "W", "E.png", "N"]


def test_frontmatter_property_links() -> None:
    text = '---\nrelated: "[[Other Note]]"\nup:\n  - "[[Parent|P]]"\n---\nbody [[Body]]\n'
    links = links_of(text)
    assert [(lk.target, lk.display, lk.line) for lk in links] == [
        ("Other Note", None, 2),
        ("Parent", "P", 4),
        ("Body", None, 6),
    ]


def test_no_markdown_link_inside_wikilink() -> None:
    assert targets("[[Note]](Other.md)") == ["Note"]


def test_callout_links_found() -> None:
    text = "> [!note] Title\n> See [[Inside Callout]] and ![[pic.png]]\n"
    links = links_of(text)
    assert [(lk.target, lk.embed, lk.line) for lk in links] == [
        ("Inside Callout", False, 2),
        ("pic.png", True, 2),
    ]


# ---------------------------------------------------------------------------
# read_note
# ---------------------------------------------------------------------------


def test_read_utf8_plain(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "héllo [[x]]\n")
    assert read_note(path, 1000) == ("héllo [[x]]\n", ())


def test_read_strips_bom(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", b"\xef\xbb\xbf# Title\n")
    assert read_note(path, 1000) == ("# Title\n", ())


def test_read_normalizes_crlf_and_cr(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", b"one\r\ntwo\rthree\n")
    assert read_note(path, 1000)[0] == "one\ntwo\nthree\n"


def test_read_cp1252_fallback_warns(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "caf\xe9 \u201cquoted\u201d \u20ac".encode("cp1252"))
    text, warnings = read_note(path, 1000)
    assert text == "café “quoted” €"
    assert warnings == ("not valid UTF-8; read as cp1252",)


def test_read_latin1_fallback_when_not_cp1252(tmp_path: Path) -> None:
    # 0x81 is undefined in cp1252.
    path = write(tmp_path, "a.md", b"caf\xe9 \x81")
    text, warnings = read_note(path, 1000)
    assert text == "café \x81"
    assert warnings == ("not valid UTF-8; read as latin-1",)


def test_read_utf16_with_bom(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "# Hi\r\n".encode("utf-16"))
    text, warnings = read_note(path, 1000)
    assert text == "# Hi\n"
    assert warnings


def test_read_binary_nul(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", b"PK\x03\x04\x00\x00binary")
    with pytest.raises(NoteUnreadable) as info:
        read_note(path, 1000)
    assert info.value.reason == "binary file, not Markdown"
    assert isinstance(info.value, CairnError)


def test_read_binary_control_chars(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", bytes(range(1, 32)) * 10 + b"some text")
    with pytest.raises(NoteUnreadable, match="binary file"):
        read_note(path, 10_000)


def test_read_text_with_few_controls_is_fine(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", b"text\twith\x0ca form feed and \x1b[0m escape\n")
    assert read_note(path, 1000)[0].startswith("text")


def test_read_too_large(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "x" * 101)
    with pytest.raises(NoteUnreadable) as info:
        read_note(path, 100)
    assert info.value.reason == "too large: 101 bytes > 100"
    assert read_note(path, 101)[0] == "x" * 101


def test_read_vanished(tmp_path: Path) -> None:
    with pytest.raises(NoteUnreadable) as info:
        read_note(tmp_path / "gone.md", 100)
    assert info.value.reason == "vanished before it could be read"


def test_read_directory_named_md(tmp_path: Path) -> None:
    (tmp_path / "x.md").mkdir()
    with pytest.raises(NoteUnreadable, match="not a regular file"):
        read_note(tmp_path / "x.md", 100)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_read_fifo_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(NoteUnreadable, match="not a regular file"):
        read_note(tmp_path / "pipe.md", 100)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read anything")
def test_read_permission_denied(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "secret")
    path.chmod(0)
    try:
        with pytest.raises(NoteUnreadable) as info:
            read_note(path, 100)
        assert info.value.reason == "permission denied"
    finally:
        path.chmod(0o644)


# ---------------------------------------------------------------------------
# scan_vault
# ---------------------------------------------------------------------------


def test_scan_basic_sorted_and_skips_dot_dirs(tmp_path: Path) -> None:
    write(tmp_path, "b.md", "bb")
    write(tmp_path, "a.md", "a")
    write(tmp_path, "Folder/c.md")
    write(tmp_path, "Folder/Upper.MD")
    write(tmp_path, "Folder/img.png", b"\x89PNG")
    write(tmp_path, ".obsidian/workspace.md")
    write(tmp_path, ".cairn/index.md")
    write(tmp_path, ".git/HEAD.md")
    write(tmp_path, ".trash/old.md")
    write(tmp_path, ".custom/hidden.md")
    write(tmp_path, ".hidden-file.md")
    result = scan_vault(tmp_path)
    assert isinstance(result, ScanResult)
    assert [n.path for n in result.notes] == ["Folder/Upper.MD", "Folder/c.md", "a.md", "b.md"]
    assert result.attachments == ("Folder/img.png",)
    assert result.skipped == ()
    b = next(n for n in result.notes if n.path == "b.md")
    assert isinstance(b, VaultFile)
    assert b.size == 2
    assert b.abs_path == tmp_path / "b.md"
    assert b.mtime == pytest.approx((tmp_path / "b.md").stat().st_mtime)


def test_scan_excludes(tmp_path: Path) -> None:
    for rel in (
        "keep.md",
        "Archive/old.md",
        "Archive/deep/older.md",
        "Drafts/d.md",
        "Notes/Drafts/nested.md",
        "Notes/keep2.md",
        "scratch.tmp.md",
        "Templates/t.md",
        "Notes/Templates-not.md",
    ):
        write(tmp_path, rel)
    result = scan_vault(tmp_path, excludes=("Archive/**", "**/Drafts", "*.tmp.md", "Templates/"))
    assert [n.path for n in result.notes] == [
        "Notes/Templates-not.md",
        "Notes/keep2.md",
        "keep.md",
    ]
    assert result.skipped == ()


def test_scan_exclude_plain_folder_name(tmp_path: Path) -> None:
    write(tmp_path, "Archive/old.md")
    write(tmp_path, "ArchiveNot/new.md")
    assert [n.path for n in scan_vault(tmp_path, ("Archive",)).notes] == ["ArchiveNot/new.md"]


def test_scan_missing_root(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFound):
        scan_vault(tmp_path / "nope")
    write(tmp_path, "file.md")
    with pytest.raises(VaultNotFound):
        scan_vault(tmp_path / "file.md")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_scan_symlink_loop_and_outside(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    write(vault, "Folder/a.md")
    write(outside, "secret.md")
    os.symlink(vault / "Folder", vault / "Folder" / "loop")  # points at its own parent
    os.symlink(vault, vault / "Folder" / "root-loop")
    os.symlink(outside, vault / "external")
    os.symlink(outside / "secret.md", vault / "external-note.md")
    os.symlink(vault / "missing.md", vault / "broken.md")
    result = scan_vault(vault)
    assert [n.path for n in result.notes] == ["Folder/a.md"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons == {
        "Folder/loop": "symlink loop",
        "Folder/root-loop": "symlink loop",
        "external": "symlink points outside the vault",
        "external-note.md": "symlink points outside the vault",
        "broken.md": "broken symlink",
    }


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_scan_symlink_chain_loop(tmp_path: Path) -> None:
    os.symlink(tmp_path / "b.md", tmp_path / "a.md")
    os.symlink(tmp_path / "a.md", tmp_path / "b.md")
    result = scan_vault(tmp_path)
    assert result.notes == ()
    assert {s.reason for s in result.skipped} == {"symlink loop"}


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_scan_follows_symlinks_inside_vault(tmp_path: Path) -> None:
    write(tmp_path, "Real/a.md")
    write(tmp_path, "Real/b.md")
    write(tmp_path, ".hidden/h.md")
    os.symlink(tmp_path / "Real" / "a.md", tmp_path / "alias-of-a.md")
    os.symlink(tmp_path / "Real", tmp_path / "Linked")  # the same folder again
    os.symlink(tmp_path / ".hidden", tmp_path / "Unhidden")
    result = scan_vault(tmp_path)
    # The file link is followed; the folder link would only duplicate Real/, so the notes
    # are listed under their real path (whatever order the entries were listed in).
    assert [n.path for n in result.notes] == ["Real/a.md", "Real/b.md", "alias-of-a.md"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["Linked"].startswith("symlink to a folder already scanned")
    assert reasons["Unhidden"] == "symlink into a hidden or excluded folder"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_scan_vault_root_may_be_a_symlink(tmp_path: Path) -> None:
    write(tmp_path, "real/a.md")
    os.symlink(tmp_path / "real", tmp_path / "link")
    result = scan_vault(tmp_path / "link")
    assert [n.path for n in result.notes] == ["a.md"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_scan_fifo_and_directory_named_md(tmp_path: Path) -> None:
    write(tmp_path, "ok.md")
    os.mkfifo(tmp_path / "pipe.md")
    write(tmp_path, "weird.md/inner.md")
    result = scan_vault(tmp_path)
    assert [n.path for n in result.notes] == ["ok.md", "weird.md/inner.md"]
    assert [(s.path, s.reason) for s in result.skipped] == [("pipe.md", "not a regular file")]


def test_scan_file_vanishing_during_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "stays.md")
    doomed = write(tmp_path, "doomed.md")
    real_scandir = os.scandir

    class Listing:
        def __init__(self, path: str) -> None:
            with real_scandir(path) as it:
                self.entries = list(it)
            # The file goes away between listing the folder and looking at the entry.
            if doomed.exists():
                doomed.unlink()

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self.entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr("engine.vault.scan.os.scandir", Listing)
    result = scan_vault(tmp_path)
    assert [n.path for n in result.notes] == ["stays.md"]
    assert [(s.path, s.reason) for s in result.skipped] == [("doomed.md", "vanished during scan")]


def test_scan_folder_vanishing_during_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "Sub/a.md")
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if path.endswith("Sub"):
            raise FileNotFoundError(path)
        return real_scandir(path)

    monkeypatch.setattr("engine.vault.scan.os.scandir", scandir)
    result = scan_vault(tmp_path)
    assert [(s.path, s.reason) for s in result.skipped] == [("Sub", "vanished during scan")]


def test_scan_permission_denied_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "Locked/a.md")
    write(tmp_path, "open.md")
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        # Simulated, because root (which CI may run as) can list any folder.
        if path.endswith("Locked"):
            raise PermissionError(path)
        return real_scandir(path)

    monkeypatch.setattr("engine.vault.scan.os.scandir", scandir)
    result = scan_vault(tmp_path)
    assert [n.path for n in result.notes] == ["open.md"]
    assert [(s.path, s.reason) for s in result.skipped] == [("Locked", "permission denied")]


# ---------------------------------------------------------------------------
# LinkResolver
# ---------------------------------------------------------------------------


@pytest.fixture
def resolver() -> LinkResolver:
    notes = [
        ("Home.md", "Home", ()),
        ("Projects/Alpha.md", "Alpha", ("Project A", "PA")),
        ("Projects/Readme.md", "Readme", ()),
        ("Archive/Projects/Alpha.md", "Alpha (old)", ()),
        ("Readme.md", "Readme", ()),
        ("Deep/Nested/Readme.md", "Readme", ()),
        ("Other/Readme.md", "Readme", ()),
        ("People/Marcus Chen.md", "Marcus Chen", ("Marcus",)),
        ("Notes/v1.2.md", "Version notes", ()),
        ("Titled.md", "A Custom Title", ()),
    ]
    attachments = ["Attachments/diagram.png", "Other/diagram.png", "Docs/Manual.PDF"]
    return LinkResolver(notes, attachments)


def test_resolve_empty_target_is_source(resolver: LinkResolver) -> None:
    assert resolver.resolve("", "Projects/Alpha.md") == "Projects/Alpha.md"


def test_resolve_case_insensitive(resolver: LinkResolver) -> None:
    assert resolver.resolve("home", "x.md") == "Home.md"
    assert resolver.resolve("MARCUS CHEN", "x.md") == "People/Marcus Chen.md"
    assert resolver.resolve("Home.md", "x.md") == "Home.md"


def test_resolve_prefers_same_folder(resolver: LinkResolver) -> None:
    assert resolver.resolve("Readme", "Projects/Alpha.md") == "Projects/Readme.md"
    assert resolver.resolve("Readme", "Deep/Nested/Other.md") == "Deep/Nested/Readme.md"
    assert resolver.resolve("Alpha", "Archive/Projects/x.md") == "Archive/Projects/Alpha.md"


def test_resolve_shortest_then_alphabetical(resolver: LinkResolver) -> None:
    assert resolver.resolve("Readme", "Elsewhere/x.md") == "Readme.md"
    assert resolver.resolve("Alpha", "x.md") == "Projects/Alpha.md"
    tie = LinkResolver([("b/Same.md", "Same", ()), ("a/Same.md", "Same", ())], [])
    assert tie.resolve("Same", "c/x.md") == "a/Same.md"


def test_resolve_path_exact_and_suffix(resolver: LinkResolver) -> None:
    assert resolver.resolve("Projects/Alpha", "x.md") == "Projects/Alpha.md"
    assert resolver.resolve("Archive/Projects/Alpha", "x.md") == "Archive/Projects/Alpha.md"
    assert resolver.resolve("Nested/Readme", "x.md") == "Deep/Nested/Readme.md"
    assert resolver.resolve("projects/alpha.md", "x.md") == "Projects/Alpha.md"
    # An exact path wins over a same-folder note that only ends the same way.
    assert resolver.resolve("Projects/Alpha", "Archive/Projects/x.md") == "Projects/Alpha.md"
    assert resolver.resolve("jects/Alpha", "x.md") is None


def test_resolve_relative_and_absolute_paths(resolver: LinkResolver) -> None:
    assert resolver.resolve("../Readme", "Projects/Alpha.md") == "Readme.md"
    assert resolver.resolve("./Readme", "Other/x.md") == "Other/Readme.md"
    assert resolver.resolve("/Readme", "Other/x.md") == "Readme.md"


def test_resolve_alias_and_title_fallback(resolver: LinkResolver) -> None:
    assert resolver.resolve("Project A", "x.md") == "Projects/Alpha.md"
    assert resolver.resolve("pa", "x.md") == "Projects/Alpha.md"
    assert resolver.resolve("Marcus", "x.md") == "People/Marcus Chen.md"
    assert resolver.resolve("a custom title", "x.md") == "Titled.md"


def test_resolve_file_name_beats_alias() -> None:
    r = LinkResolver([("Home.md", "Home", ()), ("Other.md", "Other", ("Home",))], [])
    assert r.resolve("Home", "x.md") == "Home.md"


def test_resolve_attachments(resolver: LinkResolver) -> None:
    assert resolver.resolve("diagram.png", "x.md") == "Other/diagram.png"
    assert resolver.resolve("diagram.png", "Attachments/n.md") == "Attachments/diagram.png"
    assert resolver.resolve("Attachments/diagram.png", "Other/n.md") == "Attachments/diagram.png"
    assert resolver.resolve("manual.pdf", "x.md") == "Docs/Manual.PDF"
    assert resolver.resolve("diagram", "x.md") is None


def test_resolve_note_with_dots_in_name(resolver: LinkResolver) -> None:
    assert resolver.resolve("v1.2", "x.md") == "Notes/v1.2.md"


def test_resolve_dangling(resolver: LinkResolver) -> None:
    assert resolver.resolve("Nowhere", "x.md") is None
    assert resolver.resolve("Projects/Nowhere", "x.md") is None


def test_resolver_scales(resolver: LinkResolver) -> None:
    import time

    notes = [(f"f{i % 100}/Note {i}.md", f"Note {i}", (f"alias {i}",)) for i in range(50_000)]
    notes += [(f"f{i}/README.md", "README", ()) for i in range(2_000)]
    t0 = time.process_time()
    big = LinkResolver(notes, [])
    build = time.process_time() - t0
    t0 = time.process_time()
    for i in range(20_000):
        assert big.resolve(f"note {i}", "f1/x.md") == f"f{i % 100}/Note {i}.md"
        big.resolve("README", f"f{i % 2000}/x.md")
    per_call = (time.process_time() - t0) / 40_000
    assert build < 5.0
    assert per_call < 50e-6
