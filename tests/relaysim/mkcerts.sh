#!/bin/sh
# Makes the throwaway TLS material the simulator's wss:// relays use, with
# openssl, into DIR (default ./certs). Nothing here is a secret: every file is
# generated at test time and only ever served on loopback.
#   ca.pem ca.key                 the test CA (trust this one)
#   localhost.pem localhost.key   leaf for localhost, 127.0.0.1 and ::1, signed by ca
#   wrongname.pem wrongname.key   leaf for wrong.invalid only, signed by ca
#   untrusted-ca.pem              a second CA nobody trusts
#   untrusted.pem untrusted.key   leaf for localhost signed by the untrusted CA
#   expired.pem expired.key       leaf for localhost signed by ca, validity long past
# Existing files are kept; pass -f to make everything again.
set -eu

force=0
if [ "${1:-}" = "-f" ]; then
	force=1
	shift
fi
dir=${1:-./certs}
mkdir -p "$dir"
cd "$dir"
if [ "$force" -eq 0 ] && [ -s expired.pem ]; then
	exit 0
fi

days=3650
key() {
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

# ca NAME SUBJECT
ca() {
	key "$1.key"
	openssl req -x509 -new -key "$1.key" -sha256 -days "$days" -subj "$2" \
	    -addext "basicConstraints=critical,CA:TRUE" \
	    -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$1.pem"
}

# leaf NAME CA SAN [openssl-x509 extra args...]
leaf() {
	name=$1 signer=$2 san=$3
	shift 3
	key "$name.key"
	cn=${san%%,*}
	openssl req -new -key "$name.key" -subj "/CN=${cn#DNS:}" -out "$name.csr"
	printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n%s\n%s\n' \
	    "extendedKeyUsage=serverAuth" "subjectAltName=$san" > "$name.ext"
	openssl x509 -req -in "$name.csr" -CA "$signer.pem" -CAkey "$signer.key" \
	    -CAcreateserial -sha256 -extfile "$name.ext" -out "$name.pem" "$@" 2>/dev/null
	rm -f "$name.csr" "$name.ext"
}

ca ca "/CN=cachebox relaysim test CA"
ca untrusted-ca "/CN=cachebox relaysim untrusted CA"
leaf localhost ca "DNS:localhost,IP:127.0.0.1,IP:::1" -days "$days"
leaf wrongname ca "DNS:wrong.invalid" -days "$days"
leaf untrusted untrusted-ca "DNS:localhost,IP:127.0.0.1,IP:::1" -days "$days"
# An expired leaf: openssl x509 has no start date option, so sign it through
# "openssl ca" with explicit dates in the past.
key expired.key
openssl req -new -key expired.key -subj "/CN=localhost" -out expired.csr
mkdir -p cadb
: > cadb/index.txt
cat > cadb/ca.cnf <<CNF
[ca]
default_ca = d
[d]
database = cadb/index.txt
new_certs_dir = cadb
serial = cadb/serial
default_md = sha256
policy = p
copy_extensions = none
unique_subject = no
[p]
commonName = supplied
[x]
basicConstraints = CA:FALSE
subjectAltName = DNS:localhost,IP:127.0.0.1,IP:::1
CNF
echo 01 > cadb/serial
openssl ca -batch -config cadb/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr \
    -startdate 20200101000000Z -enddate 20200201000000Z -extensions x \
    -out expired.pem 2>/dev/null
rm -rf cadb expired.csr ./*.srl
