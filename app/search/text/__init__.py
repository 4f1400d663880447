"""Text analysis: how texts and queries become words, terms, phrases and dates. The storage layer
never imports it: the words of what it indexes and the phrases it searches come from here."""
