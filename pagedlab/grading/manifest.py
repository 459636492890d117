"""sha256 of each source of pagedlab.grading, checked before grading (pagedlab.grading.integrity).

Written by `python -m pagedlab.grading.integrity --write`; do not edit by hand."""

SHA256 = {
    '__init__.py': '5b18578c61cede5fc34e8eddb43b1c5c755059ed7e812998920f8baaff168121',
    '__main__.py': '9d1524e386bd7a47d61711d50ee45d8fa27b6b08d07b8e5cb496224c371d9401',
    'align.py': 'c8a34a3f4610d31bbfa4b61c8b8d363d1a3d371f0f1aff5863d1f5173d92bf53',
    'calls.py': '3203d87b88c540960828e092e1a4ce6a9392e365423d954a36868f1b67c48ef4',
    'cli.py': '19da2f8c36375f58876d717d8f5a23a7dc3764c8f2088e4f634c74edde47f379',
    'collect.py': 'd00fcbeed239ada6ba42d0ae8c33a710f716013858af197e64aa34e67ddb258f',
    'grade.py': 'f96c43776eb76d0af946a1240a57a8b47e54466386b2c01add6fd09938fb4566',
    'harness.py': '4b7f7707fa60d40ba78433bc11d16b52a24e294116e7743683a515aeee1a03de',
    'integrity.py': 'c04f1c73bac92ee039c8b66db33c9a662f7ca8e93351492d0c9e5a8b53c9eeb6',
    'judge.py': '4327ade127107bf1437bbadc11b8fb1beed7b51a8ee617f68a7d78ed1e720279',
    'procs.py': 'c0e619a8125af38dd0224243c13fec8c2474afefa36508e2f775d4789eaa6692',
    'pytest_plugin.py': '98a1c8be9e7c1180eca57cdc04fb198d26d816e6d2aed25e2d3aff39f060e37f',
    'review.py': 'ca84d69aa7b7d1cb3fbd86d448c4555012087a950a1788330e9e124df087119d',
    'run.py': '1f72a60b1500d8a3e880f8a46902d9ca497d798522b7eef1e9d86763c6766c9a',
    'sandbox.py': '3eaf67cc7f48ba732051dcf74a51162a753fba2eb4987102d7cfa6a7285b808f',
    'shards.py': '96ca37a588e54b084f4f8de5d09244da7c940ecad2a8c42956051c02d4094516',
    'specs.py': '5d19d7541ce4c0a2a956b3c1cd4cfe3e52f6ac9e9e92ecc61738ac56d31073df',
    'supervise.py': '4caf5b531e7cdc4e40abffff47ed46896e0328e91eba5a127122b3247543f9a6',
    'tables.py': '692a1f649ae9ddcdf41de8804f71b324336df85788be22f15add0bebbbbe2bcb',
}
