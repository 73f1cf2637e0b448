"""`autovend console`: a local web app to replay runs (`replay_app`) and to play an episode by hand (`play_app`).

Modules: `episode` (a person's episode into a run folder, through the runner), `timeline` (a finished or
partial run folder as day-by-day states), `forms` (HTML forms from the tools' JSON input schemas),
`html` (page building blocks and the shipped script and style), `replay` and `play` (the Starlette apps),
`server` (running an app with uvicorn on 127.0.0.1).
"""
