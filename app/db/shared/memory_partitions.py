"""How the memory indexes are partitioned: one partition per owner of a tenant, in the vector index
and, on PostgreSQL, the word index; and the chunk rows the word index is given."""

from __future__ import annotations


def memory_partition(tenant_id: str, owner: tuple[str, str]) -> str:
    """The partition of an owner's memories in the vector (and, on PostgreSQL, word) index."""
    return f"{tenant_id}:{owner[0]}:{owner[1]}"


# A chunk of the memory word index: (chunk id, owner partition, prepared text, its words).
ChunkWords = tuple[int, str, str, list[str]]
