"""The secured platform (`up --secure`) and the dev token issuer.

credentials.py  the principals and their generated passwords
kafka.py        SCRAM users, the SASL and TLS listeners, ACLs, client options
cassandra.py    roles, the secured schema step and grants
tls.py          the loopback CA and the broker's certificate
tokens.py       the development JWT issuer
cli.py          token
"""
