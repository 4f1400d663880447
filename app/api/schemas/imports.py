"""The answer of POST /import/{source}."""

from __future__ import annotations

from pydantic import Field

from app.api.schemas.base import ApiModel
from app.imports.service import ImportSummary


class ImportProblem(ApiModel):
    source: str = Field(description="The transcript (the request's name for it) or file.")
    line: int = Field(description="Line number (from 1) of the line that was skipped.")
    error: str


class ImportTranscriptResponse(ApiModel):
    sessions: int = Field(description="Sessions that hold messages of this transcript.")
    messages: int = Field(description="Messages stored by this request.")
    duplicates: int = Field(description="Messages that were stored already (nothing stored twice).")
    archives: int = Field(description="Archives made; Phase 2 builds their Working Memory.")
    skipped: dict[str, int] = Field(description="Lines read but not stored, by reason.")
    problems: list[ImportProblem] = Field(description="Lines that could not be read, skipped.")
    refused: dict[str, str] = Field(description="Sessions not imported, with the reason.")

    @classmethod
    def of(cls, summary: ImportSummary) -> ImportTranscriptResponse:
        return cls(
            sessions=summary.sessions,
            messages=summary.messages,
            duplicates=summary.duplicates,
            archives=summary.archives,
            skipped=summary.skipped,
            problems=[
                ImportProblem(source=p.source, line=p.line, error=p.error) for p in summary.problems
            ],
            refused=summary.refused,
        )
