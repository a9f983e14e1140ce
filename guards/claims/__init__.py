"""Claims: the wording matcher that finds where a withdrawn claim is still asserted
(``textmatch`` for shingles and anchors, ``vocabulary`` for word weights, ``scan`` for the
passages of an estate). May import ``guards.sources``, ``guards.facts``, ``guards.errors`` and
``guards.findings``."""
