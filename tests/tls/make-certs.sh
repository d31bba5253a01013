#!/bin/sh
# make-certs.sh DIR: test certificates, made fresh by every run (no key is
# ever committed). In DIR:
#   ca.crt                   the test CA
#   server.{crt,key}         for 127.0.0.1 and localhost, signed by the CA
#   client.{crt,key}         a client certificate signed by the CA
#   expired.{crt,key}        as server, but valid only in 2020
#   wronghost.{crt,key}      signed by the CA for example.invalid only
#   otherca.crt              another CA; wrongca.{crt,key}: a server
#                            certificate for 127.0.0.1 signed by it
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
days=2

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

ca() {   # ca NAME SUBJECT
    key "$1.key"
    openssl req -x509 -new -key "$1.key" -subj "$2" -days "$days" \
        -addext "basicConstraints=critical,CA:true" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$1.crt"
}

# leaf NAME CA SUBJECT SAN EKU [startdate enddate]: signed with `openssl ca`,
# the one tool here that can date a certificate in the past.
leaf() {
    name=$1 signer=$2 subj=$3 san=$4 eku=$5
    key "$name.key"
    openssl req -new -key "$name.key" -subj "$subj" -out "$name.csr"
    mkdir -p "ca-$signer"
    : > "ca-$signer/index.txt"
    cat > "$name.cnf" <<CNF
[ca]
default_ca = this
[this]
database = ca-$signer/index.txt
new_certs_dir = ca-$signer
serial = ca-$signer/serial
default_md = sha256
policy = any
copy_extensions = none
x509_extensions = ext
[any]
commonName = supplied
[ext]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = $eku
${san:+subjectAltName = $san}
CNF
    [ -f "ca-$signer/serial" ] || echo 01 > "ca-$signer/serial"
    if [ $# -ge 7 ]; then dates="-startdate $6 -enddate $7"; else dates="-days $days"; fi
    # shellcheck disable=SC2086 # dates is two options or one
    openssl ca -batch -notext -config "$name.cnf" -cert "$signer.crt" \
        -keyfile "$signer.key" $dates -in "$name.csr" -out "$name.crt" \
        2>/dev/null
    rm -f "$name.csr" "$name.cnf"
}

ca ca "/CN=rbarrier test CA"
ca otherca "/CN=rbarrier other CA"
leaf server ca "/CN=localhost" "IP:127.0.0.1,DNS:localhost" serverAuth
leaf client ca "/CN=rbarrier client" "" clientAuth
leaf expired ca "/CN=localhost" "IP:127.0.0.1,DNS:localhost" serverAuth \
    20200101000000Z 20200102000000Z
leaf wronghost ca "/CN=example.invalid" "DNS:example.invalid" serverAuth
leaf wrongca otherca "/CN=localhost" "IP:127.0.0.1,DNS:localhost" serverAuth
rm -rf ca-ca ca-otherca
chmod 600 ./*.key
