"""A differential test of tfrec against TensorFlow 2.21 on random records and specs.

``scenario`` draws a case (op, spec, records at the wire level), ``oracle`` has TensorFlow
answer it, ``compare`` runs tfrec's surfaces and applies the golden matching rules, ``driver``
counts, minimises and writes mismatches in the golden case format. Run it long with
``python -m differential --seconds 3600`` from ``python`` (see ``__main__``).
"""
