"""The server as pytest-lsp (pygls) sees it: lifecycle, diagnostics and hover."""
import pathlib

from lsprotocol import types
from pytest_lsp import LanguageClient

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "tests" / "clients" / "data" / "vadd.ptx"


def syntax(diags):
    """The syntax diagnostics (performance findings have their own codes)."""
    return [d for d in diags if d.code == "syntax"]


def open_doc(client: LanguageClient, text: str, name: str = "doc.ptx") -> str:
    uri = (ROOT / "target" / name).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="ptx", version=1, text=text)
        )
    )
    return uri


async def test_clean_file_has_no_diagnostics(client: LanguageClient):
    uri = open_doc(client, EXAMPLE.read_text())
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert syntax(client.diagnostics[uri]) == []


async def test_garbage_line_is_reported_on_its_line(client: LanguageClient):
    lines = EXAMPLE.read_text().splitlines()
    at = next(i for i, l in enumerate(lines) if "ld.global" in l)
    lines.insert(at, "\tthis is ( not ptx")
    uri = open_doc(client, "\n".join(lines) + "\n", "bad.ptx")
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    diags = syntax(client.diagnostics[uri])
    assert diags, "expected a diagnostic for the garbage line"
    assert {d.range.start.line for d in diags} == {at}


async def test_hover_on_kernel(client: LanguageClient):
    text = EXAMPLE.read_text()
    uri = open_doc(client, text, "hover.ptx")
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    line = next(i for i, l in enumerate(text.splitlines()) if ".entry" in l)
    col = text.splitlines()[line].index("vadd") + 1
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=col),
        )
    )
    assert hover is not None
    assert "vadd" in hover.contents.value
    assert "occupancy" in hover.contents.value
