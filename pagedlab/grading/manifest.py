"""sha256 of each source of pagedlab.grading, checked before grading (pagedlab.grading.integrity).

Written by `python -m pagedlab.grading.integrity --write`; do not edit by hand."""

SHA256 = {
    '__init__.py': '5b18578c61cede5fc34e8eddb43b1c5c755059ed7e812998920f8baaff168121',
    '__main__.py': '9d1524e386bd7a47d61711d50ee45d8fa27b6b08d07b8e5cb496224c371d9401',
    'align.py': 'c8a34a3f4610d31bbfa4b61c8b8d363d1a3d371f0f1aff5863d1f5173d92bf53',
    'calls.py': '8e38bdd3382ef66019f445d79886674593be4d0057a2d8de0b69ab3140b46483',
    'cli.py': 'f01417e01e4e805e79a9315371113a5348d402dfd88b9e5c1352106056bb81c1',
    'collect.py': '91703a46233e906da74075446e56ae921f9c6013d401ad44551780a71e9a47de',
    'grade.py': '09b40f243d340d3e27aa7ef2f0db2536fb473fdf85044d9a9051a6e7138dafeb',
    'harness.py': '41a59eded92551479a064379ec63b51e550862a1a950b2448fdc74eac570ca9a',
    'integrity.py': 'c04f1c73bac92ee039c8b66db33c9a662f7ca8e93351492d0c9e5a8b53c9eeb6',
    'judge.py': 'd24cf87024ece0ca58e9c7f4eaed0deb51ef2694519830b23987459e9f84f3a4',
    'procs.py': 'ffa1bc2b4d4e0e1f79d17eaf1abf3a2245c86c931f28d418b61a067790d2f3f3',
    'pytest_plugin.py': 'be5cb5419ea188be957af9ff669ce2adfdb749edde257f73fa66dce6a0c1be79',
    'review.py': '64b360940751c68552ed89770ac51cadf74828c4aeb2c34dc052935ba489bd9d',
    'run.py': 'e66ab867561e6f47cbb7ed452916f22bb8375ab2b88eddd3f85a3794be2e3d08',
    'sandbox.py': '100c9878e118d821c35884553d5b52d4a8319514634a7ed484dbc05c17577e8a',
    'shards.py': '96ca37a588e54b084f4f8de5d09244da7c940ecad2a8c42956051c02d4094516',
    'similarity.py': '1c232e11fe10145292e7ff447fef5a2dbeaa5af9c5c89a9d35d2b94690fcc4e7',
    'specs.py': 'ec86e5943e5f080333c2e83fec7d5c52b7c6d90719002d7997784655ebdf0e2c',
    'supervise.py': 'cc3975cdccc9c2d20b7fc1fcaf8d27bea44aebd5d1977293885b8c8f5c708d2d',
    'tables.py': '78efeedffb1993bbc0d200ba438f540dae7be2626e05368b71aae9531da5df3c',
}
