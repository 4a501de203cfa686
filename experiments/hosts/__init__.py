"""Places where people and programs meet the agents: ``play`` (the terminal game),
``replay`` (the replay viewer); the protocol server and the web table."""
