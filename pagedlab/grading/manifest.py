"""sha256 of each source of pagedlab.grading, checked before grading (pagedlab.grading.integrity).

Written by `python -m pagedlab.grading.integrity --write`; do not edit by hand."""

SHA256 = {
    '__init__.py': '5b18578c61cede5fc34e8eddb43b1c5c755059ed7e812998920f8baaff168121',
    '__main__.py': '9d1524e386bd7a47d61711d50ee45d8fa27b6b08d07b8e5cb496224c371d9401',
    'align.py': 'c8a34a3f4610d31bbfa4b61c8b8d363d1a3d371f0f1aff5863d1f5173d92bf53',
    'calls.py': '310519090f45b493a6f1357ae27dcaaa4490151f309dc8ddeb7e7d3b4864a11a',
    'cli.py': 'f01417e01e4e805e79a9315371113a5348d402dfd88b9e5c1352106056bb81c1',
    'collect.py': '76b88f291d10d703d9d7b776d52dec5bc704af40bc3440d4772ae10d625a2347',
    'grade.py': '09b40f243d340d3e27aa7ef2f0db2536fb473fdf85044d9a9051a6e7138dafeb',
    'harness.py': '81e9ebb4decad71034cf826e1eea05fda48b7e6b548f2c4b6a3fa6f63e1e4240',
    'integrity.py': 'c04f1c73bac92ee039c8b66db33c9a662f7ca8e93351492d0c9e5a8b53c9eeb6',
    'judge.py': '2ca1cdb4cb914737e36f089f0aecc2003355d5946f3d1f72ea6650b7a31f5a8b',
    'procs.py': '7007046f4f999e82e6713b5ff2af5ac99a7806173aeb318959ba1fa0dfd50726',
    'pytest_plugin.py': 'be5cb5419ea188be957af9ff669ce2adfdb749edde257f73fa66dce6a0c1be79',
    'review.py': '15349d3727d1364433144b7e606b863645666565af24610de12e3a26fe8ba9d4',
    'run.py': '129bf3816c4c8fc39a5f6bb338de40b6103ba6d3a504d7960f99a905c0be52c0',
    'sandbox.py': '975d7e635a7b39bac9023495d8836af771fbd7520bade3e5a3e530be35edfd8c',
    'shards.py': '96ca37a588e54b084f4f8de5d09244da7c940ecad2a8c42956051c02d4094516',
    'similarity.py': '44c8d67c568b610133550e4011af07de36940578cd74c4f913be6851b945790c',
    'specs.py': '89ee8ca0f910ff9d94bbb7f68f1319d344e8a00c7354bffd9f34039294ad4e03',
    'supervise.py': 'cc3975cdccc9c2d20b7fc1fcaf8d27bea44aebd5d1977293885b8c8f5c708d2d',
    'tables.py': '78efeedffb1993bbc0d200ba438f540dae7be2626e05368b71aae9531da5df3c',
}
