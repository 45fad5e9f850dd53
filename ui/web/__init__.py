"""The local web view: Starlette app, Markdown rendering, pages and static assets."""
