"""Research applications built on the library: the benchmark suite (:mod:`.bench`), the
reproductions of published tables (:mod:`.validation`, :mod:`.experiments`) and where the real logs
are (:mod:`.traces`). The CLI's ``pbf bench`` and ``pbf experiment`` run them."""
