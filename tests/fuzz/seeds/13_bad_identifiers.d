provider my-app { probe a(); };
provider app { probe a.b(); probe c$d(); probe e__f(); probe e_f(); probe E__F(); };
provider app { probe a(); probe a(); };
provider APP { probe E_F(); };
