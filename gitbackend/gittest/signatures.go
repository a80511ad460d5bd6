package gittest

// PGPSignature and SSHSignature are commit signatures made once with gpg
// (an ed25519 key, id F53463A4D297C983) and ssh-keygen, kept as fixtures:
// tests of signed commits need no key and no agent. They sign nothing in
// particular; git reports the OpenPGP one as made by a key it lacks.
const (
	PGPSignature = `-----BEGIN PGP SIGNATURE-----

iIkEABYIADEWIQQ0jV4RBQlXtK8DLuP1NGOk0pfJgwUCaweP/xMcc2lnbmVyQGV4
YW1wbGUuY29tAAoJEPU0Y6TSl8mD8b0A/1AZIiqeMtxZjTzm3tyDfihCrkwJUNJU
G82gAtHv/HieAQDSUbU0zpouzhH1tG5RLL+lcs7DLzGOMDCZ4izeM2pqAQ==
=SzBK
-----END PGP SIGNATURE-----`
	SSHSignature = `-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgraTERQcCbvKZy46KG+g/LDvJeF
FUzfYMGnX6P90AjgoAAAADZ2l0AAAAAAAAAAZzaGE1MTIAAABTAAAAC3NzaC1lZDI1NTE5
AAAAQIkXhfkQ6WAU9+KhgSICvXjgDQbQr8fsbD6BTS8NZddUKLuYZfR/Vqt8Ex72IYC+iY
SYlczKtxFd0YQsLopAPgQ=
-----END SSH SIGNATURE-----`
)
