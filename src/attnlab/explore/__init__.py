"""``attnlab explore``: attention as one offline, interactive HTML page.

- ``data``: a run's attention on some texts (and over training) as plain, quantised data
- ``page``: the self-contained page (script, style and data inline; nothing fetched)
- ``explorer``: the page as an object that shows itself in Jupyter (``viz.explore``)
- ``serve``: the same page live on 127.0.0.1, with a text box
"""

from .explorer import Explorer, explore

__all__ = ["Explorer", "explore"]
