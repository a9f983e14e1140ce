"""The editor server (``guards server``): the Language Server Protocol over stdio or TCP, with
pygls and lsprotocol (the ``server`` extra).

``app`` is the server (the open documents, the debounced checks, what is published, the
requests it answers); ``checking`` runs the suite on an estate with the open documents' unsaved
texts read in place of their files (``guards.sources.files``) and computes the fixes of what
it found (``guards.write.fixes``, writing nothing); ``convert`` turns findings, errors and
fixes into protocol types. At the command line's level: may import ``guards.run``,
``guards.report``, ``guards.write`` and everything below them; only ``guards.cli`` imports it.
"""
