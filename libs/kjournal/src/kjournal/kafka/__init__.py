"""Kafka side of the journal: producing actions, reading the unreplicated head, the head cache."""
