"""Stage 1: which Python files under a root are analysed, and the modules Python would import them as.

``walk`` lists the files a :class:`~sgtrace.model.PathFilter` keeps (``ignore``),
``roots`` names their modules from the layout and the packaging settings found
in the tree. Nothing in the tree is imported or run; configuration files are
read as data.
"""

from sgtrace.discover.ignore import PatternError, git_top
from sgtrace.discover.naming import printable
from sgtrace.discover.walk import Listing, RootError, discover, package_at

__all__ = ["Listing", "PatternError", "RootError", "discover", "git_top", "package_at", "printable"]
