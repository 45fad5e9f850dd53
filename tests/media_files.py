"""Small real media files for embed tests: a one-page PDF, a short WAV sound and a canvas."""

from __future__ import annotations

import io
import json
import struct
import wave


def one_page_pdf(text: str = "Cairn handbook") -> bytes:
    """A valid one-page PDF showing `text` (ASCII), its cross-reference table computed."""
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def short_wav(seconds: float = 0.5, rate: int = 8000) -> bytes:
    """A short silent mono WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(rate)
        sound.writeframes(struct.pack("<h", 0) * int(seconds * rate))
    return out.getvalue()


def canvas_json(note: str) -> str:
    """A canvas with a group, a text card, a card showing `note` and a web link, one labelled arrow."""
    return json.dumps(
        {
            "nodes": [
                {"id": "g", "type": "group", "label": "Ideas", "x": -20, "y": -40, "width": 600, "height": 320},
                {"id": "a", "type": "text", "text": "# Plan\nShip the **offline** sync", "x": 0, "y": 0,
                 "width": 250, "height": 120, "color": "4"},
                {"id": "b", "type": "file", "file": note, "x": 300, "y": 0, "width": 250, "height": 120},
                {"id": "c", "type": "link", "url": "https://example.org/", "x": 0, "y": 200, "width": 250, "height": 60},
            ],
            "edges": [{"id": "e1", "fromNode": "a", "toNode": "b", "label": "explains"}],
        }
    )
