from judge_http import judge_server  # noqa: F401  (the fixture)
