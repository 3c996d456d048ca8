"""Kafka side of the journal: producing actions, reading the unreplicated tail, the tail cache."""
