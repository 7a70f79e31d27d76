"""scaffold-template: an rlvr environment package (made by `rlvr init`)."""

from scaffold_template.env import ENV_ID, make_env

__all__ = ["ENV_ID", "make_env"]
