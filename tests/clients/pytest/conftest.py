"""pytest-lsp fixtures: the real `warpsight lsp` binary driven by pygls's LSP client."""
import os
import pathlib

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("WARPSIGHT_BIN", str(ROOT / "target" / "debug" / "warpsight"))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[BINARY, "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=ROOT.as_uri(),
            initialization_options={"debounceMs": 0},
        )
    )
    yield
    await lsp_client.shutdown_session()
