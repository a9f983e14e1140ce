"""Claims: the wording matcher that finds where a withdrawn claim is still asserted
(``textmatch`` for shingles and anchors, ``vocabulary`` for word weights, ``figures`` and
``denial`` for restatements by a claim's quantities and by another denial, ``scan`` for the
passages of an estate, ``followup`` for what acts on a claim). May import ``guards.sources``,
``guards.facts``, ``guards.errors`` and ``guards.findings``."""
