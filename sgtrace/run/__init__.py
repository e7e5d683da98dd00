"""Reading a run: SGLang's log of a server's start-ups, apart from the code analyses it feeds.

The messages SGLang prints (:mod:`~sgtrace.run.messages`), the prefixes the tools that keep a log
put before them (:mod:`~sgtrace.run.lines`), the stream a log is read as (:mod:`~sgtrace.run.stream`),
what each line says (:mod:`~sgtrace.run.events`) and the start-ups it holds
(:mod:`~sgtrace.run.startups`). Nothing here knows the code under analysis or its graph.
"""
