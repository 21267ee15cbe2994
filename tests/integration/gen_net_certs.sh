#!/bin/bash
# gen_net_certs.sh DIR — test PKI for the src/net integration test: a CA,
# a localhost leaf (DNS:localhost, IP:127.0.0.1, IP:::1), a wrong-name leaf
# and a leaf from a second CA that nobody trusts. Generated fresh each run.
set -euo pipefail
d=$1
mkdir -p "$d"
cd "$d"
q() { "$@" >/dev/null 2>&1; }

ca() {	# name subject
	q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$1.key" -out "$1.pem" -days 2 -subj "/CN=$2" \
	    -addext "basicConstraints=critical,CA:TRUE" \
	    -addext "keyUsage=critical,keyCertSign,cRLSign"
}

leaf() {	# name ca san
	q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$1.key" -out "$1.csr" -subj "/CN=$1"
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' \
	    "$3" > "$1.ext"
	q openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" \
	    -CAcreateserial -days 2 -out "$1.pem" -extfile "$1.ext"
}

ca ca "cachebox test CA"
ca rogueca "untrusted test CA"
leaf good ca "DNS:localhost,IP:127.0.0.1,IP:::1"
leaf wrong ca "DNS:wrong.example"
leaf rogue rogueca "DNS:localhost,IP:127.0.0.1"
