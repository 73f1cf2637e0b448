"""`autovend console`: a local web app to replay runs (`replay_app`) and to play an episode by hand (`play_app`).

Modules: `episode` (a person's episode into a run folder, through the runner), `timeline` (a finished or
partial run folder as day-by-day states), `forms` (HTML forms from the tools' JSON input schemas),
`results` (tool calls and results as tables), `rules` (the play page's rules panel, from the world),
`chart` (the replay's SVG chart), `html` (page building blocks and the shipped script and style),
`replay` and `play` (the Starlette apps), `security` (who may use a console), `server` (running an app
with uvicorn on 127.0.0.1).
"""
