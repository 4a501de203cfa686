"""A local web table: play Guandan against agents, watch agents, step through replays.

    python -m experiments.hosts.web            # then open the printed address

See ``experiments/hosts/web/app.py`` (routes), ``tables.py`` (game sessions and what each browser
may see) and ``static/`` (the page: plain HTML, CSS and one JS module, no build step).
"""
