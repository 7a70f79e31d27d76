"""OpenEnv: serve any rlvr environment through OpenEnv's own server (`rlvr serve`).

```
wire     the Action/Observation models of the rlvr-over-OpenEnv contract (ChatAction, ChatObservation)
server   ServedEnv (OpenEnv `Environment` running one rlvr episode copy) and `create_served_app`
serve    `serve`: the app under uvicorn (keepalive pings, SIGTERM closes every session)
```

Needs the `openenv` extra (`pip install 'rlvr[openenv]'`); `import rlvr.adapters.openenv` itself
imports nothing of it.
"""

__all__: list[str] = []
