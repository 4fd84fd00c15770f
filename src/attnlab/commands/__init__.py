"""One module per ``attnlab`` command, each with ``add_parser(subparsers)`` and ``run(args)``."""
