"""The codes of the compiled core as Python IntEnums (declared in ``pbf/_codes.pxd``, the single
definition; :mod:`pbf.codes` adds the labels the outputs use)."""
