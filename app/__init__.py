"""context-engine: a lossless, bounded, self-improving context service for AI agents."""

__version__ = "0.1.0"
