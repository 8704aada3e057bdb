# Stubs of the extension module (crates/groundcite-py/src/py.rs). The typed
# public API is groundcite/__init__.py; these functions take JSON text.
from collections.abc import Sequence
from typing import Any, Optional, Union

from .errors import InputError

__version__: str
PROVIDERS: str

_Text = Union[str, bytes]

def verify(
    answer: _Text, chunks: _Text, *, question: Optional[str] = None, model: Optional[str] = None,
    trace_id: Optional[str] = None, profile: str = "default", claims: str = "strict",
    dicts: bool = False,
) -> Union[str, dict[str, Any]]: ...
def verify_many(
    requests: Sequence[_Text], *, model: Optional[str] = None, jobs: Optional[int] = None,
    profile: str = "default", claims: str = "strict", dicts: bool = False,
) -> list[Union[str, dict[str, Any], InputError]]: ...
def parse(
    text: _Text, chunks: _Text, *, question: Optional[str] = None, model: Optional[str] = None,
    trace_id: Optional[str] = None, profile: str = "default", claims: str = "strict",
    dicts: bool = False,
) -> Union[str, dict[str, Any]]: ...
def convert(
    provider: str, response: _Text, chunks: _Text, *, request: Optional[_Text] = None,
    question: Optional[str] = None, model: Optional[str] = None, trace_id: Optional[str] = None,
    profile: str = "default", claims: str = "strict", dicts: bool = False,
) -> Union[str, dict[str, Any]]: ...
def schema(
    target: str, chunks: Optional[_Text] = None, chunk_ids: Optional[list[str]] = None
) -> tuple[str, list[str]]: ...
def lint(schema: _Text, target: str) -> str: ...
def _time_verify(answer: _Text, chunks: _Text, n: int) -> float: ...
