"""The committed OpenAPI document and the README keep up with the code."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from app.cli import openapi_document
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def setting_env_names(model: type[BaseModel] = Settings, prefix: str = "CE_") -> list[str]:
    names = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names += setting_env_names(annotation, f"{prefix}{name.upper()}__")
        else:
            names.append(f"{prefix}{name.upper()}")
    return names


def test_openapi_document_is_current():
    committed = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    assert committed == openapi_document(), "run `make openapi` and commit openapi/openapi.json"


def test_every_setting_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    missing = [name for name in setting_env_names() if f"`{name}`" not in readme]
    assert missing == []


def test_every_setting_has_a_description():
    def walk(model: type[BaseModel]) -> list[str]:
        out = []
        for name, field in model.model_fields.items():
            annotation = field.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                out += walk(annotation)
            elif not field.description:
                out.append(name)
        return out

    assert walk(Settings) == []


def test_readme_starts_with_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```sh", 1)[1].split("```", 1)[0]
    assert "make serve" in first_block and "make test" in first_block


def test_every_endpoint_has_a_readme_example():
    readme = (ROOT / "README.md").read_text()
    for path in openapi_document()["paths"]:
        example = (
            path.replace("{archiveId}", "archive_001")
            .replace("{sessionId}", "demo")
            .replace("{memoryId}", "$ID")
            .replace("{source}", "openclaw")
        )
        assert f"localhost:8080{example}" in readme, path
