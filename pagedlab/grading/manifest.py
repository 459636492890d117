"""sha256 of each source of pagedlab.grading, checked before grading (pagedlab.grading.integrity).

Written by `python -m pagedlab.grading.integrity --write`; do not edit by hand."""

SHA256 = {
    '__init__.py': '5b18578c61cede5fc34e8eddb43b1c5c755059ed7e812998920f8baaff168121',
    '__main__.py': '9d1524e386bd7a47d61711d50ee45d8fa27b6b08d07b8e5cb496224c371d9401',
    'align.py': 'c8a34a3f4610d31bbfa4b61c8b8d363d1a3d371f0f1aff5863d1f5173d92bf53',
    'calls.py': '5e655e396d635088a22b7dda08e8eee2374f495d5f27f94a5ce5eccc9598932d',
    'cli.py': '19da2f8c36375f58876d717d8f5a23a7dc3764c8f2088e4f634c74edde47f379',
    'collect.py': 'd00fcbeed239ada6ba42d0ae8c33a710f716013858af197e64aa34e67ddb258f',
    'grade.py': '1e6feba0a5e2cbc6b9285ead08e2a5903e0ae375dc4edc9993f6b0186ea065b9',
    'harness.py': '2cb6ccb367b2e34b0fb398e9d53b77c03c4d9612d0fe03982db6a8f6ad88bc46',
    'integrity.py': 'c04f1c73bac92ee039c8b66db33c9a662f7ca8e93351492d0c9e5a8b53c9eeb6',
    'judge.py': 'ff448d3527929781f02a185ba525f51e441424794edc23f5c56bddc03a592d9e',
    'procs.py': 'ffa1bc2b4d4e0e1f79d17eaf1abf3a2245c86c931f28d418b61a067790d2f3f3',
    'pytest_plugin.py': '98a1c8be9e7c1180eca57cdc04fb198d26d816e6d2aed25e2d3aff39f060e37f',
    'review.py': 'ef5926f70ca84759c6a5068ffae755c7fc516465ac93bf334458c766d43eac56',
    'run.py': '1743810819bbc3bfc181f1628d5315589f39ff842c01fa1f6ebbf5dc44165438',
    'sandbox.py': '4ab6180bb0e76dbd85071991ee585b2daa0ec73e92202c57d66c43d5e2b94016',
    'shards.py': '96ca37a588e54b084f4f8de5d09244da7c940ecad2a8c42956051c02d4094516',
    'similarity.py': '1c232e11fe10145292e7ff447fef5a2dbeaa5af9c5c89a9d35d2b94690fcc4e7',
    'specs.py': '6cb6234fb9692521a924efd98d680cf3c1219ce2c0bc5e61a6fbfc1c8e864924',
    'supervise.py': 'd58ad65fcea7dde13527d71c81b3cf47998b89557a3d6f6cd9a2d8c46e650abb',
    'tables.py': '692a1f649ae9ddcdf41de8804f71b324336df85788be22f15add0bebbbbe2bcb',
}
