"""sha256 of each source of pagedlab.grading, checked before grading (pagedlab.grading.integrity).

Written by `python -m pagedlab.grading.integrity --write`; do not edit by hand."""

SHA256 = {
    '__init__.py': '5b18578c61cede5fc34e8eddb43b1c5c755059ed7e812998920f8baaff168121',
    '__main__.py': '9d1524e386bd7a47d61711d50ee45d8fa27b6b08d07b8e5cb496224c371d9401',
    'align.py': 'c8a34a3f4610d31bbfa4b61c8b8d363d1a3d371f0f1aff5863d1f5173d92bf53',
    'calls.py': '310519090f45b493a6f1357ae27dcaaa4490151f309dc8ddeb7e7d3b4864a11a',
    'cli.py': 'f01417e01e4e805e79a9315371113a5348d402dfd88b9e5c1352106056bb81c1',
    'collect.py': 'ea3f3f5727e2ab309295d6536721791201c7fe6f99868f67e7591e18fc2c25a4',
    'grade.py': '09b40f243d340d3e27aa7ef2f0db2536fb473fdf85044d9a9051a6e7138dafeb',
    'harness.py': '933426fb2605b5fca534d6f5bfad2e4d6a5dfa71fc2a711eaba0969c84819203',
    'integrity.py': 'c04f1c73bac92ee039c8b66db33c9a662f7ca8e93351492d0c9e5a8b53c9eeb6',
    'judge.py': 'bb1fe2f7fda70951ff351dbcbb6b9677734a756ccbb0bae26a5a81d883582912',
    'procs.py': 'ffa1bc2b4d4e0e1f79d17eaf1abf3a2245c86c931f28d418b61a067790d2f3f3',
    'pytest_plugin.py': 'be5cb5419ea188be957af9ff669ce2adfdb749edde257f73fa66dce6a0c1be79',
    'review.py': '34faeab5eed30bd73ba3447eb01ddbb64ee7c1643111c600508d5cf246d22551',
    'run.py': '551f66e41fe5b54418e82aa787a0a26056b2603c4a768d9eaa60505c67c4c3b8',
    'sandbox.py': '975d7e635a7b39bac9023495d8836af771fbd7520bade3e5a3e530be35edfd8c',
    'shards.py': '96ca37a588e54b084f4f8de5d09244da7c940ecad2a8c42956051c02d4094516',
    'similarity.py': '131e4b385c05dec7ba2c222113106b28bd381cff1abf92343a226c171977e69e',
    'specs.py': '89ee8ca0f910ff9d94bbb7f68f1319d344e8a00c7354bffd9f34039294ad4e03',
    'supervise.py': 'cc3975cdccc9c2d20b7fc1fcaf8d27bea44aebd5d1977293885b8c8f5c708d2d',
    'tables.py': '78efeedffb1993bbc0d200ba438f540dae7be2626e05368b71aae9531da5df3c',
}
